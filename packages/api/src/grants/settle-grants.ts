// Makes each provider match the grants table, after commit: issues a committed grant
// with its stored secret, revokes a committed revocation. Idempotent, so a crash, a
// provider outage or two instances doing it at once only delays it (decision 0011).
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { grants, nodes, notify, CHANNELS, MANY_NODES, type ChangeBus, type DbOrTx } from "@mesh/db";
import { GrantDeclaration } from "@mesh/protocol";
import type { Deps } from "../deps";
import { recordEvents } from "../services/record-event";
import { grantEvents } from "./grant-events";

type SettleDeps = Pick<Deps, "db" | "log" | "grants">;

/** "settled": the provider now matches; "busy": another instance holds it; "none": nothing to do. Throws when the provider fails. */
export async function settleGrant(deps: SettleDeps, id: string): Promise<"settled" | "busy" | "none"> {
  const setup = deps.grants;
  return deps.db.transaction(async (tx) => {
    const [pending] = await tx
      .select({ id: grants.id })
      .from(grants)
      .where(and(eq(grants.id, id), isNull(grants.settledAt)));
    if (!pending) return "none";
    const [row] = await tx
      .select()
      .from(grants)
      .where(and(eq(grants.id, id), isNull(grants.settledAt)))
      .for("update", { skipLocked: true });
    if (!row) return "busy";
    const provider = setup?.providers[row.provider as GrantDeclaration["provider"]];
    if (!setup || !provider) throw new Error(`no ${row.provider} grant provider is configured`);
    if (row.revokedAt) await provider.revoke(row.principal);
    else await provider.issue(row.principal, GrantDeclaration.parse(row.spec), setup.secrets.open(row.secret!, row.principal));
    await tx.update(grants).set({ settledAt: sql`now()` }).where(eq(grants.id, id));
    // The gateway holds back a declaration whose grants are not settled yet; now it can go.
    if (!row.revokedAt) await notify(tx, CHANNELS.declaration, row.nodeId);
    return "settled";
  });
}

/**
 * Grants of retired or revoked nodes that are still open (left so by a control plane that committed
 * the node's state and failed before its grants): revoked in one statement. Returns their ids.
 */
export async function markLeftoverGrantsRevoked(db: DbOrTx): Promise<string[]> {
  return db.transaction(async (tx) => {
    const gone = tx
      .select({ id: nodes.id })
      .from(nodes)
      .where(inArray(nodes.state, ["retired", "revoked"]));
    const rows = await tx
      .update(grants)
      .set({ revokedAt: sql`now()`, secret: null, settledAt: null })
      .where(and(isNull(grants.revokedAt), inArray(grants.nodeId, gone)))
      .returning({ id: grants.id, nodeId: grants.nodeId, provider: grants.provider, principal: grants.principal });
    // Audited like any revocation (grant.revoke), in one event whatever their number.
    if (rows.length > 0) await recordEvents(tx, grantEvents("system", "grant.revoke", rows, { reason: "its node is retired or revoked" }));
    return rows.map((r) => r.id);
  });
}

/** Settles every pending grant, a page at a time; returns how many are still pending because their provider failed. */
export async function settleGrants(deps: SettleDeps): Promise<number> {
  const PAGE = 1000;
  // A retired or revoked node's grants are revoked whatever happened between its state and its grants.
  const leftover = await markLeftoverGrantsRevoked(deps.db);
  if (leftover.length > 0) deps.log.warn({ grants: leftover.length }, "grants of retired or revoked nodes were still open; revoking them");
  let failed = 0;
  for (;;) {
    const pending = await deps.db.select({ id: grants.id }).from(grants).where(isNull(grants.settledAt)).orderBy(asc(grants.createdAt)).limit(PAGE);
    let failedHere = 0;
    let busy = false;
    for (const { id } of pending) {
      try {
        if ((await settleGrant(deps, id)) === "busy") busy = true;
      } catch (err) {
        failedHere++;
        deps.log.warn({ grant: id, reason: (err as Error).message }, "grant not settled at its provider; will retry");
      }
    }
    failed += failedHere;
    // A short page is the last. A failure (the provider is struggling) or a grant another
    // instance holds would come back on the next page: leave the rest to the next sweep.
    if (pending.length < PAGE || failedHere > 0 || busy) return failed;
  }
}

/** Settles a grant as soon as its transaction commits (the bus), and sweeps for any left behind. */
export async function startGrantSettler(deps: SettleDeps, bus: ChangeBus, opts: { sweepMs?: number } = {}): Promise<() => Promise<void>> {
  let chain = Promise.resolve();
  const run = (fn: () => Promise<unknown>) => {
    chain = chain.then(fn).then(
      () => {},
      (err) => deps.log.warn({ reason: (err as Error).message }, "grant settling failed; will retry"),
    );
  };
  // "*": a fleet compile changed many grants at once (ensure-node-grants.ts). A notification missed
  // while the bus was away is made up by a sweep at once, not at the next interval.
  const unsubscribe = await bus.subscribe(CHANNELS.grant, (id) => run(() => (id === MANY_NODES ? settleGrants(deps) : settleGrant(deps, id))), {
    onGap: () => run(() => settleGrants(deps)),
  });
  run(() => settleGrants(deps));
  const sweep = setInterval(() => run(() => settleGrants(deps)), opts.sweepMs ?? 30_000);
  sweep.unref();
  return async () => {
    clearInterval(sweep);
    await unsubscribe();
    await chain;
  };
}
