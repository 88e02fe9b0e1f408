// Link transitions (connect, disconnect) written together (issue 11): a control-plane restart with
// 10,000 hosts was 10,000+ transactions, each with its own audit event and NOTIFY. The PresenceBatcher
// collects transitions for up to ~100 ms (or 500 of them) and writes them in ONE transaction: one
// locking SELECT (rows in id order, the order a fleet compile locks them in: no deadlock), one UPDATE
// for the disconnects, one for the connects, one multi-row INSERT of audit events, one NOTIFY.
import { retryDelayMs } from "../batching/retry-delay";
import { sql } from "drizzle-orm";
import { events, nodes, notify, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import type { Deps } from "../deps";

/** How a link change is audited: not at all once a node spent its budget (a host reconnecting in a loop). */
export interface LinkAudit {
  audit?: boolean;
  /** Link changes left out of the audit since the last one written. */
  suppressed?: number;
}

export interface ConnectRequest {
  nodeId: string;
  hostVersion: string;
  /** The server frames the host named on its upgrade (HOST_FEATURES_HEADER), stored with the node. */
  hostFeatures?: string[];
  /** The key the link authenticated with: a node re-keyed meanwhile is refused. */
  publicKey?: string;
  linkId: string | null;
  audit?: LinkAudit;
}

export interface DisconnectRequest {
  nodeId: string;
  reason: string;
  linkId: string | null;
  audit?: LinkAudit;
}

/** States from which a node may not link (a revoke, retirement or pending claim that committed first wins). */
const NO_LINK = new Set(["revoked", "retired", "pending"]);

interface Locked {
  id: string;
  state: string;
  publicKey: string;
  gatewayId: string | null;
  linkId: string | null;
}

/**
 * Writes one batch of one gateway's transitions in one transaction. A disconnect applies only
 * when the node is still held by this gateway through that same link (an older link's late close
 * cannot undo a newer link's connect). A connect applies only to a node that may still link and
 * still holds the key its link authenticated with. Disconnects are applied before connects; of
 * several connects of one node, the last one asked for wins (the earlier links were replaced).
 * Returns the nodes whose connect was accepted (the caller closes the other links).
 */
export async function writeTransitions(
  deps: Pick<Deps, "db">,
  gatewayId: string,
  connects: ConnectRequest[],
  disconnects: DisconnectRequest[],
): Promise<Set<string>> {
  const accepted = new Set<string>();
  if (connects.length === 0 && disconnects.length === 0) return accepted;
  const ids = [...new Set([...connects, ...disconnects].map((r) => r.nodeId))];
  await deps.db.transaction(async (tx) => {
    // Every row this batch may change, locked at once in id order; later statements decide on what it read.
    const rows: Locked[] = await tx
      .select({ id: nodes.id, state: nodes.state, publicKey: nodes.publicKey, gatewayId: nodes.gatewayId, linkId: nodes.linkId })
      .from(nodes)
      .where(sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`)
      .orderBy(nodes.id)
      .for("update");
    const byId = new Map(rows.map((r) => [r.id, r]));
    const audit: Array<typeof events.$inferInsert> = [];

    const gone = disconnects.filter((d) => {
      const row = byId.get(d.nodeId);
      return row !== undefined && row.gatewayId === gatewayId && row.linkId === d.linkId;
    });
    if (gone.length > 0) {
      await tx
        .update(nodes)
        .set({
          state: sql`case when ${nodes.state} = 'enrolled' then 'disconnected' else ${nodes.state} end`,
          gatewayId: null,
          linkId: null,
          lastSeenAt: sql`now()`,
          updatedAt: sql`now()`,
        })
        .where(sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(gone.map((d) => d.nodeId))}::jsonb)::uuid)`);
      for (const d of gone) {
        if (d.audit?.audit !== false)
          audit.push({ actor: `node:${d.nodeId}`, action: "node.disconnect", nodeId: d.nodeId, data: { gatewayId, reason: d.reason } });
      }
    }

    const latest = new Map(connects.map((c) => [c.nodeId, c]));
    const taken = [...latest.values()].filter((c) => {
      const row = byId.get(c.nodeId);
      return row !== undefined && !NO_LINK.has(row.state) && (c.publicKey === undefined || row.publicKey === c.publicKey);
    });
    if (taken.length > 0) {
      // One parameter, node id -> [link id, host version, host features], whatever the number of links.
      const links = JSON.stringify(Object.fromEntries(taken.map((c) => [c.nodeId, [c.linkId, c.hostVersion, c.hostFeatures ?? []]])));
      await tx
        .update(nodes)
        .set({
          state: sql`case when ${nodes.state} = 'disconnected' then 'enrolled' else ${nodes.state} end`,
          gatewayId,
          linkId: sql`${links}::jsonb -> (${nodes.id}::text) ->> 0`,
          hostVersion: sql`${links}::jsonb -> (${nodes.id}::text) ->> 1`,
          hostFeatures: sql`${links}::jsonb -> (${nodes.id}::text) -> 2`,
          lastSeenAt: sql`now()`,
          updatedAt: sql`now()`,
        })
        .where(sql`${nodes.id} in (select jsonb_object_keys(${links}::jsonb)::uuid)`);
      for (const c of taken) accepted.add(c.nodeId);
      // Each link that asked is audited as before, a replaced one included (its close is audited too).
      for (const c of connects) {
        if (!accepted.has(c.nodeId) || c.audit?.audit === false) continue;
        audit.push({
          actor: `node:${c.nodeId}`,
          action: "node.connect",
          nodeId: c.nodeId,
          data: { gatewayId, ...(c.audit?.suppressed ? { suppressedEvents: c.audit.suppressed } : {}) },
        });
      }
    }

    if (audit.length > 0) await tx.insert(events).values(audit);
    if (gone.length > 0 || taken.length > 0) await notify(tx, CHANNELS.node, MANY_NODES);
  });
  return accepted;
}

/** The audit events of nodes released together (a dead or stopping gateway), in one INSERT. */
export async function recordReleases(tx: DbOrTx, nodeIds: string[], reason: string): Promise<void> {
  if (nodeIds.length === 0) return;
  await tx.insert(events).values(nodeIds.map((nodeId) => ({ actor: "control-plane", action: "node.disconnect", nodeId, data: { reason } })));
}

interface Waiting<R, T> {
  request: R;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
  /** Batches this transition was in that failed. */
  failures: number;
}

/**
 * A failed batch is written again after a pause (both kinds are safe to repeat: connects are
 * guarded by state and key, disconnects by link id). A connect gives up after CONNECT_TRIES
 * (its caller closes the link, so the host links again later); a disconnect keeps trying, or
 * a dead host would look connected, its last seen the gateway's beat, until this gateway stops.
 */
const CONNECT_TRIES = 3;

export interface PresenceBatcherOptions {
  /** How long the first transition of a batch waits for others (default 100 ms). */
  windowMs?: number;
  /** A batch this large is written at once (default 500). */
  maxItems?: number;
}

/**
 * One gateway's transitions, batched. Each caller awaits its own result; one batch is written
 * at a time (under load the next one grows while the last one commits). A failed batch is
 * written again after a pause (see retryDelayMs); a connect that failed CONNECT_TRIES times fails.
 */
export class PresenceBatcher {
  private connects: Array<Waiting<ConnectRequest, boolean>> = [];
  private disconnects: Array<Waiting<DisconnectRequest, void>> = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly windowMs: number;
  private readonly maxItems: number;
  /** Transactions written, for tests and logs. */
  batches = 0;

  constructor(
    private readonly deps: Pick<Deps, "db">,
    private readonly gatewayId: string,
    opts: PresenceBatcherOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? 100;
    this.maxItems = opts.maxItems ?? 500;
  }

  /** Marks a node connected through this link; false when it may not link (close the link). */
  connect(request: ConnectRequest): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.connects.push({ request, resolve, reject, failures: 0 });
      this.schedule();
    });
  }

  /** Marks a node gone when this link (the one that connected it) closed. */
  disconnect(request: DisconnectRequest): Promise<void> {
    return new Promise((resolve, reject) => {
      this.disconnects.push({ request, resolve, reject, failures: 0 });
      this.schedule();
    });
  }

  /** Writes everything asked for so far; resolves once it is written. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.chain = this.chain.then(() => this.drain());
    return this.chain;
  }

  private pending(): number {
    return this.connects.length + this.disconnects.length;
  }

  private schedule() {
    if (this.pending() >= this.maxItems) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.windowMs);
  }

  /** Puts a failed batch's transitions back, ahead of newer ones, and writes them after a pause. */
  private retry(connects: Array<Waiting<ConnectRequest, boolean>>, disconnects: Array<Waiting<DisconnectRequest, void>>, failures: number) {
    if (connects.length + disconnects.length === 0) return;
    setTimeout(() => {
      this.connects.unshift(...connects);
      this.disconnects.unshift(...disconnects);
      void this.flush();
    }, retryDelayMs(failures)).unref();
  }

  /** Writes what is pending when its turn comes, in batches of at most maxItems. */
  private async drain(): Promise<void> {
    while (this.pending() > 0) {
      const connects = this.connects.splice(0, this.maxItems);
      const disconnects = this.disconnects.splice(0, this.maxItems - connects.length);
      try {
        const accepted = await writeTransitions(
          this.deps,
          this.gatewayId,
          connects.map((w) => w.request),
          disconnects.map((w) => w.request),
        );
        this.batches++;
        for (const w of connects) w.resolve(accepted.has(w.request.nodeId));
        for (const w of disconnects) w.resolve();
      } catch (err) {
        const failures = Math.max(0, ...[...connects, ...disconnects].map((w) => ++w.failures));
        const retried = connects.filter((w) => w.failures < CONNECT_TRIES);
        for (const w of connects) if (w.failures >= CONNECT_TRIES) w.reject(err);
        this.retry(retried, disconnects, failures);
      }
    }
  }
}
