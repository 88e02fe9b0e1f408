// Group commit of enrolments (decision 0020): enrolments arriving together are made in one
// transaction with set-based statements, ~11 per batch instead of ~11 per enrolment. What a batch
// cannot take, and every enrolment of a batch that failed, goes one by one (enrol-one.ts) after it,
// in arrival order, so each request gets the answer it would have had alone.
import { and, inArray } from "drizzle-orm";
import { nodes, type Db, type DbOrTx } from "@mesh/db";
import type { EnrolRequest } from "@mesh/protocol";
import { nowOf, type Deps } from "../deps";
import { loadRoles, lockCompilerShared } from "./recompile-node";
import { insertNodesWithFirstDeclarations, planFirstDeclaration, type FirstDeclarationInput, type PlannedNode } from "./first-declaration";
import { enrolOne, enrolledFields, LIVE_STATES, newNodeName, type EnrolledNode, type EnrolMeta } from "./enrol-one";
import { consumeTokenUses, readTokens, tokenRefusal, type TokenRow } from "./enrolment-token-use";
import { timed } from "../batching/statement-times";

export interface EnrolItem {
  deps: Deps;
  request: EnrolRequest;
  meta: EnrolMeta;
  /** The token's parts (parseToken), already checked for form. */
  tokenId: string;
  secret: string;
}

export type EnrolOutcome = { node: EnrolledNode } | { error: unknown };

/** An enrolment whose token admits it; `source` is the batch's key for it. */
type Admitted = EnrolItem & { source: EnrolItem; token: TokenRow; index: number };

/** Thrown inside a batch's transaction to roll it back: these tokens had fewer uses left than the batch asked. */
class TokensShort extends Error {
  constructor(readonly tokenIds: string[]) {
    super(`tokens without enough uses left for the batch: ${tokenIds.join(", ")}`);
  }
}

/** Answers every enrolment of a batch (all on one database), an error for those refused. Never throws. */
export async function enrolBatch(items: EnrolItem[]): Promise<Map<EnrolItem, EnrolOutcome>> {
  const out = new Map<EnrolItem, EnrolOutcome>();
  if (items.length === 0) return out;
  const db = items[0]!.deps.db;
  let tokens: Map<string, TokenRow>;
  try {
    tokens = await timed("enrol: read tokens", () =>
      readTokens(
        db,
        items.map((i) => i.tokenId),
      ),
    );
  } catch (error) {
    for (const item of items) out.set(item, { error });
    return out;
  }
  const admitted: Admitted[] = [];
  items.forEach((item, index) => {
    const token = tokens.get(item.tokenId);
    const refusal = tokenRefusal(token, item.secret, nowOf(item.deps));
    if (refusal) out.set(item, { error: refusal });
    else admitted.push({ ...item, source: item, token: token!, index });
  });

  // A machine once per batch: a second enrolment of it comes after, and finds the node the first made.
  const machines = new Set<string>();
  let group: Admitted[] = [];
  let later: Admitted[] = [];
  for (const item of admitted) {
    const machineId = item.request.profile.machineId;
    if (machines.has(machineId)) later.push(item);
    else {
      machines.add(machineId);
      group.push(item);
    }
  }
  // A token short of uses makes the batch roll back; it is tried once more without that token's enrolments.
  for (let attempt = 0; group.length > 0 && attempt < 2; attempt++) {
    try {
      const { made, deferred } = await timed("enrol: batch transaction", () => commitGroup(db, group));
      for (const [item, node] of made) out.set(item.source, { node });
      later.push(...deferred);
      group = [];
    } catch (err) {
      if (!(err instanceof TokensShort) && !isAboutItsRows(err)) {
        // The database itself failed (unreachable, a deadline): one by one would only wait for it N times.
        for (const item of [...group, ...later]) out.set(item.source, { error: err });
        return out;
      }
      if (!(err instanceof TokensShort) || attempt === 1) {
        if (!(err instanceof TokensShort)) group[0]!.deps.log.warn({ err, enrolments: group.length }, "enrolment batch failed; enrolling one by one");
        later.push(...group);
        group = [];
        break;
      }
      const short = new Set(err.tokenIds);
      later.push(...group.filter((i) => short.has(i.token.id)));
      group = group.filter((i) => !short.has(i.token.id));
    }
  }
  // Each in its own transaction, as it would have been alone: up to LATER_CONCURRENCY at once, in
  // arrival order within a machine's enrolments (the second finds the node the first made).
  later = later.sort((a, b) => a.index - b.index);
  const chains = new Map<string, Admitted[]>();
  for (const item of later) {
    const machineId = item.request.profile.machineId;
    const chain = chains.get(machineId);
    if (chain) chain.push(item);
    else chains.set(machineId, [item]);
  }
  const queue = [...chains.values()];
  const worker = async () => {
    for (let chain = queue.shift(); chain; chain = queue.shift()) {
      for (const item of chain) {
        try {
          out.set(item.source, { node: await enrolOne(item.deps, item.request, item.meta, item.token) });
        } catch (error) {
          out.set(item.source, { error });
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LATER_CONCURRENCY, queue.length) }, worker));
  return out;
}

/** How many deferred enrolments run at once (each its own transaction, a pool connection each). */
const LATER_CONCURRENCY = 8;

/**
 * A batch failure that one of its enrolments may have caused, which going one by one sorts out: a
 * value Postgres refuses (SQLSTATE class 22), a constraint (23: the same machine enrolling in another
 * transaction), a deadlock or serialization failure (40).
 */
function isAboutItsRows(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; e = e.cause as typeof e, i++) {
    if (typeof e.code === "string" && /^(22|23|40)[0-9A-Z]{3}$/.test(e.code)) return true;
  }
  return false;
}

/** The live nodes of these machines, locked in id order (two batches never wait on each other in a cycle). */
async function liveMachines(tx: DbOrTx, machineIds: string[]): Promise<Set<string>> {
  const rows = await tx
    .select({ id: nodes.id, machineId: nodes.machineId })
    .from(nodes)
    .where(and(inArray(nodes.machineId, machineIds), inArray(nodes.state, [...LIVE_STATES])))
    .orderBy(nodes.id)
    .for("update");
  return new Set(rows.map((r) => r.machineId));
}

/**
 * One transaction for the whole group, in the order a single enrolment takes its locks (compiler
 * lock, node rows, token rows last): new machines are inserted with their first declarations; a
 * machine that is already a live node, or whose declaration declares grants, is deferred to the
 * one-by-one path. Throws TokensShort (rolled back) when a token has fewer uses left than asked.
 */
async function commitGroup(db: Db, group: Admitted[]): Promise<{ made: Map<Admitted, EnrolledNode>; deferred: Admitted[] }> {
  const now = nowOf(group[0]!.deps);
  return db.transaction(async (tx) => {
    await timed("enrol: compiler lock", () => lockCompilerShared(tx));
    const roles = await timed("enrol: roles", () => loadRoles(tx));
    const live = await timed("enrol: live nodes", () =>
      liveMachines(
        tx,
        group.map((i) => i.request.profile.machineId),
      ),
    );
    const deferred: Admitted[] = [];
    const fresh: Array<{ item: Admitted; planned: PlannedNode; input: FirstDeclarationInput }> = [];
    for (const item of group) {
      if (live.has(item.request.profile.machineId)) {
        deferred.push(item);
        continue;
      }
      const { request, meta, token } = item;
      const actor = `token:${token.id}`;
      const input: FirstDeclarationInput = {
        values: {
          ...enrolledFields(request, meta, token),
          name: newNodeName(request),
          state: "disconnected",
          labels: token.labels,
          machineId: request.profile.machineId,
        },
        roles,
        actor,
        grants: item.deps.grants,
        event: { actor, action: "node.enrol", data: { address: meta.address, machineId: request.profile.machineId } },
      };
      const planned = planFirstDeclaration(input);
      // Grants are made per node (ensureNodeGrants): rare at enrolment, left to the general path.
      if (!planned.conflicted && planned.compiled.grants.length > 0) deferred.push(item);
      else fresh.push({ item, planned, input });
    }
    const made = new Map<Admitted, EnrolledNode>();
    if (fresh.length === 0) return { made, deferred };
    await timed("enrol: nodes, declarations, events, notify", () => insertNodesWithFirstDeclarations(tx, fresh));
    const uses = new Map<string, number>();
    for (const { item } of fresh) uses.set(item.token.id, (uses.get(item.token.id) ?? 0) + 1);
    const short = await timed("enrol: consume token uses", () => consumeTokenUses(db, tx, uses, now));
    if (short.length > 0) throw new TokensShort(short);
    for (const { item, input, planned } of fresh) made.set(item, { id: planned.id, name: input.values.name, labels: input.values.labels, pendingId: null });
    return { made, deferred };
  });
}
