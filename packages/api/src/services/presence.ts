// Presence: which gateway (and which link on it) holds which node. Transitions are written at once
// (presence-batch.ts batches them); nothing is written while a link is idle: a connected node's last
// seen is its gateway's heartbeat (last-seen.ts). Unchanged reports only batch a "last checked" time.
import { and, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { gateways, nodes, notify, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import type { Deps } from "../deps";
import { recordReleases, writeTransitions, type LinkAudit } from "./presence-batch";

export type { LinkAudit } from "./presence-batch";

/**
 * Marks a node connected through this gateway, only if it still holds the key the
 * link authenticated with and may still link: a revoke or a replacement that
 * committed between authentication and now wins (false: close the link).
 * One transition alone; the gateway batches its own (PresenceBatcher).
 */
export async function markConnected(
  deps: Pick<Deps, "db">,
  nodeId: string,
  gatewayId: string,
  hostVersion: string,
  audit: LinkAudit = {},
  publicKey?: string,
  linkId: string | null = null,
): Promise<boolean> {
  const accepted = await writeTransitions(deps, gatewayId, [{ nodeId, hostVersion, publicKey, linkId, audit }], []);
  return accepted.has(nodeId);
}

/**
 * Marks a node gone when its link closed. Only the link that marked it connected may:
 * the node may have reconnected elsewhere, or through a newer link on this same gateway
 * whose connect was written before this (older) link's close.
 */
export async function markDisconnected(
  deps: Pick<Deps, "db">,
  nodeId: string,
  gatewayId: string,
  reason: string,
  audit: LinkAudit = {},
  linkId: string | null = null,
) {
  await writeTransitions(deps, gatewayId, [], [{ nodeId, reason, linkId, audit }]);
}

/**
 * The batched "last checked" write: one statement for every node whose report was heard
 * unchanged since the last one. It never waits for a row lock (a plain multi-row UPDATE locks
 * rows in scan order and deadlocked with a fleet recompile locking them in id order, decision
 * 0017): rows locked now are skipped and returned, for the caller to touch at the next flush.
 */
export async function touchLastChecked(deps: Pick<Deps, "db">, nodeIds: string[]): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const ids = sql`(select jsonb_array_elements_text(${JSON.stringify(nodeIds)}::jsonb)::uuid)`;
  const touched = await deps.db
    .update(nodes)
    .set({ lastCheckedAt: sql`now()` })
    .where(
      inArray(nodes.id, deps.db.select({ id: nodes.id }).from(nodes).where(sql`${nodes.id} in ${ids}`).orderBy(nodes.id).for("update", { skipLocked: true })),
    )
    .returning({ id: nodes.id });
  if (touched.length === nodeIds.length) return [];
  const done = new Set(touched.map((n) => n.id));
  return nodeIds.filter((id) => !done.has(id));
}

/** A beat: whether the gateway's row was still there, and the database's time the beat wrote. */
export interface GatewayBeat {
  /** False when its row was gone: another instance took it for dead and released its nodes, which the caller must then claim back (reassertLinks). */
  kept: boolean;
  /** now() on the database: every liveness judgement is made on the database's clock, never a process's. */
  at: Date;
}

/** A gateway instance says it is alive. */
export async function beatGateway(deps: Pick<Deps, "db">, gatewayId: string): Promise<GatewayBeat> {
  const beaten = await deps.db.update(gateways).set({ heartbeatAt: sql`now()` }).where(eq(gateways.id, gatewayId)).returning({ at: gateways.heartbeatAt });
  if (beaten[0]) return { kept: true, at: beaten[0].at };
  const [inserted] = await deps.db
    .insert(gateways)
    .values({ id: gatewayId })
    .onConflictDoUpdate({ target: gateways.id, set: { heartbeatAt: sql`now()` } })
    .returning({ at: gateways.heartbeatAt });
  return { kept: false, at: inserted!.at };
}

/**
 * Marks connected again, in one statement, the links this gateway still holds after a sweep
 * by another instance released them (a heartbeat that came late is not a dead gateway).
 * A node taken meanwhile by another gateway, or revoked, retired or pending, is left alone.
 */
export async function reassertLinks(deps: Pick<Deps, "db">, gatewayId: string, held: Array<{ nodeId: string; linkId: string }>): Promise<string[]> {
  if (held.length === 0) return [];
  // One parameter, node id -> link id, whatever the number of links; rows locked in id order.
  const byNode = JSON.stringify(Object.fromEntries(held.map((h) => [h.nodeId, h.linkId])));
  return deps.db.transaction(async (tx) => {
    const released = tx
      .select({ id: nodes.id })
      .from(nodes)
      .where(
        and(
          sql`${nodes.id}::text in (select jsonb_object_keys(${byNode}::jsonb))`,
          isNull(nodes.gatewayId),
          inArray(nodes.state, ["enrolled", "disconnected"]),
        ),
      )
      .orderBy(nodes.id)
      .for("update");
    const rows = await tx
      .update(nodes)
      .set({
        state: sql`case when ${nodes.state} = 'disconnected' then 'enrolled' else ${nodes.state} end`,
        gatewayId,
        linkId: sql`${byNode}::jsonb ->> ${nodes.id}::text`,
        lastSeenAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(and(inArray(nodes.id, released), isNull(nodes.gatewayId)))
      .returning({ id: nodes.id });
    if (rows.length > 0) await notify(tx, CHANNELS.node, MANY_NODES);
    return rows.map((r) => r.id);
  });
}

/**
 * Forgets gateways that stopped beating and marks the nodes they held as
 * disconnected: an instance that died cannot mark its own nodes. Runs on every
 * beat, so it touches nodes only when a gateway actually died.
 *
 * `watchedSince` is when the sweeping gateway's own unbroken run of beats began (the database's
 * time of its first beat after starting, after a failed beat, or after a gap): silence is only
 * counted while the sweeper itself was beating. After a database outage every gateway's last beat
 * is old; the one that recovers first must not take the others' silence, which was its own too,
 * for death (decision 0025). A gateway that really died is swept once the sweeper
 * has beaten for `staleMs` without hearing from it.
 */
export async function sweepDeadGateways(deps: Pick<Deps, "db">, staleMs: number, watchedSince: Date): Promise<string[]> {
  return deps.db.transaction(async (tx) => {
    const dead = await tx
      .delete(gateways)
      .where(lt(sql`greatest(${gateways.heartbeatAt}, ${watchedSince.toISOString()}::timestamptz)`, sql`now() - make_interval(secs => ${staleMs / 1000})`))
      .returning({ id: gateways.id, heartbeatAt: gateways.heartbeatAt });
    // Its nodes were last seen when it last vouched for them: its last beat.
    return releaseNodes(tx, Object.fromEntries(dead.map((g) => [g.id, g.heartbeatAt.toISOString()])), "its gateway stopped");
  });
}

/**
 * Marks disconnected every node the given gateways held, each last seen at its gateway's given
 * time (its last beat; null: now). Rows are locked in id order, the order a fleet recompile locks them in:
 * no deadlock. Their audit events in one INSERT, one NOTIFY.
 */
async function releaseNodes(tx: DbOrTx, lastBeats: Record<string, string | null>, reason: string): Promise<string[]> {
  const gatewayIds = Object.keys(lastBeats);
  if (gatewayIds.length === 0) return [];
  const beats = JSON.stringify(lastBeats);
  const orphaned = await tx
    .update(nodes)
    .set({
      state: sql`case when ${nodes.state} = 'enrolled' then 'disconnected' else ${nodes.state} end`,
      gatewayId: null,
      linkId: null,
      lastSeenAt: sql`coalesce((${beats}::jsonb ->> ${nodes.gatewayId})::timestamptz, now())`,
      updatedAt: sql`now()`,
    })
    .where(inArray(nodes.id, tx.select({ id: nodes.id }).from(nodes).where(inArray(nodes.gatewayId, gatewayIds)).orderBy(nodes.id).for("update")))
    .returning({ id: nodes.id });
  const ids = orphaned.map((n) => n.id);
  await recordReleases(tx, ids, reason);
  if (ids.length > 0) await notify(tx, CHANNELS.node, MANY_NODES);
  return ids;
}

/** A gateway that stops cleanly hands its nodes back at once. */
export async function retireGateway(deps: Pick<Deps, "db">, gatewayId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await tx.delete(gateways).where(eq(gateways.id, gatewayId));
    await releaseNodes(tx, { [gatewayId]: null }, "its gateway stopped");
  });
}
