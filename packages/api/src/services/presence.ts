// Presence: which gateway (and which link on it) holds which node. State changes are
// written at once; last_seen is a batched write that never waits for a row lock.
import { and, eq, inArray, isNull, lt, notInArray, sql } from "drizzle-orm";
import { gateways, nodes, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import type { Deps } from "../deps";
import { recordEvent } from "./record-event";

/** How a link change is audited: not at all once a node spent its budget (a host reconnecting in a loop). */
export interface LinkAudit {
  audit?: boolean;
  /** Link changes left out of the audit since the last one written. */
  suppressed?: number;
}

/**
 * Marks a node connected through this gateway, only if it still holds the key the
 * link authenticated with and may still link: a revoke or a replacement that
 * committed between authentication and now wins (false: close the link).
 */
export async function markConnected(deps: Pick<Deps, "db">, nodeId: string, gatewayId: string, hostVersion: string, audit: LinkAudit = {}, publicKey?: string, linkId: string | null = null): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(nodes)
      .set({ state: sql`case when ${nodes.state} = 'disconnected' then 'enrolled' else ${nodes.state} end`, gatewayId, linkId, hostVersion, lastSeenAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(nodes.id, nodeId), notInArray(nodes.state, ["revoked", "retired", "pending"]), ...(publicKey ? [eq(nodes.publicKey, publicKey)] : [])))
      .returning({ id: nodes.id });
    if (rows.length === 0) return false;
    if (audit.audit !== false) await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.connect", nodeId, data: { gatewayId, ...(audit.suppressed ? { suppressedEvents: audit.suppressed } : {}) } });
    await notify(tx, CHANNELS.node, nodeId);
    return true;
  });
}

/**
 * Marks a node gone when its link closed. Only the link that marked it connected may:
 * the node may have reconnected elsewhere, or through a newer link on this same gateway
 * whose connect was written before this (older) link's close.
 */
export async function markDisconnected(deps: Pick<Deps, "db">, nodeId: string, gatewayId: string, reason: string, audit: LinkAudit = {}, linkId: string | null = null) {
  await deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(nodes)
      .set({ state: sql`case when ${nodes.state} = 'enrolled' then 'disconnected' else ${nodes.state} end`, gatewayId: null, linkId: null, lastSeenAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(nodes.id, nodeId), eq(nodes.gatewayId, gatewayId), linkId === null ? isNull(nodes.linkId) : eq(nodes.linkId, linkId)))
      .returning({ id: nodes.id });
    if (rows.length === 0) return;
    if (audit.audit !== false) await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.disconnect", nodeId, data: { gatewayId, reason } });
    await notify(tx, CHANNELS.node, nodeId);
  });
}

/**
 * The batched liveness write: one statement per flush for all live nodes. It never waits
 * for a row lock: a plain multi-row UPDATE locks rows in scan order and deadlocked with a
 * fleet recompile locking them in id order (issue 11). Rows locked now are skipped and
 * returned, for the caller to touch at the next flush.
 */
export async function touchLastSeen(deps: Pick<Deps, "db">, nodeIds: string[]): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const touched = await deps.db
    .update(nodes)
    .set({ lastSeenAt: sql`now()` })
    .where(inArray(nodes.id, deps.db.select({ id: nodes.id }).from(nodes).where(inArray(nodes.id, nodeIds)).orderBy(nodes.id).for("update", { skipLocked: true })))
    .returning({ id: nodes.id });
  if (touched.length === nodeIds.length) return [];
  const done = new Set(touched.map((n) => n.id));
  return nodeIds.filter((id) => !done.has(id));
}

/**
 * A gateway instance says it is alive. False when its row was gone: another instance took
 * it for dead and released its nodes, which the caller must then claim back (reassertLinks).
 */
export async function beatGateway(deps: Pick<Deps, "db">, gatewayId: string): Promise<boolean> {
  const beaten = await deps.db.update(gateways).set({ heartbeatAt: sql`now()` }).where(eq(gateways.id, gatewayId)).returning({ id: gateways.id });
  if (beaten.length > 0) return true;
  await deps.db.insert(gateways).values({ id: gatewayId }).onConflictDoUpdate({ target: gateways.id, set: { heartbeatAt: sql`now()` } });
  return false;
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
      .where(and(sql`${nodes.id}::text in (select jsonb_object_keys(${byNode}::jsonb))`, isNull(nodes.gatewayId), inArray(nodes.state, ["enrolled", "disconnected"])))
      .orderBy(nodes.id)
      .for("update");
    const rows = await tx
      .update(nodes)
      .set({ state: sql`case when ${nodes.state} = 'disconnected' then 'enrolled' else ${nodes.state} end`, gatewayId, linkId: sql`${byNode}::jsonb ->> ${nodes.id}::text`, lastSeenAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(inArray(nodes.id, released), isNull(nodes.gatewayId)))
      .returning({ id: nodes.id });
    for (const { id } of rows) await notify(tx, CHANNELS.node, id);
    return rows.map((r) => r.id);
  });
}

/**
 * Forgets gateways that stopped beating and marks the nodes they held as
 * disconnected: an instance that died cannot mark its own nodes. Runs on every
 * beat, so it touches nodes only when a gateway actually died.
 */
export async function sweepDeadGateways(deps: Pick<Deps, "db">, staleMs: number): Promise<string[]> {
  return deps.db.transaction(async (tx) => {
    const dead = await tx
      .delete(gateways)
      .where(lt(gateways.heartbeatAt, sql`now() - make_interval(secs => ${staleMs / 1000})`))
      .returning({ id: gateways.id });
    return releaseNodes(tx, dead.map((g) => g.id), "its gateway stopped");
  });
}

async function releaseNodes(tx: DbOrTx, gatewayIds: string[], reason: string): Promise<string[]> {
  if (gatewayIds.length === 0) return [];
  // Rows are locked in id order, the order a fleet recompile locks them in: no deadlock.
  const orphaned = await tx
    .update(nodes)
    .set({ state: sql`case when ${nodes.state} = 'enrolled' then 'disconnected' else ${nodes.state} end`, gatewayId: null, linkId: null, updatedAt: sql`now()` })
    .where(inArray(nodes.id, tx.select({ id: nodes.id }).from(nodes).where(inArray(nodes.gatewayId, gatewayIds)).orderBy(nodes.id).for("update")))
    .returning({ id: nodes.id });
  for (const { id } of orphaned) {
    await recordEvent(tx, { actor: "control-plane", action: "node.disconnect", nodeId: id, data: { reason } });
    await notify(tx, CHANNELS.node, id);
  }
  return orphaned.map((n) => n.id);
}

/** A gateway that stops cleanly hands its nodes back at once. */
export async function retireGateway(deps: Pick<Deps, "db">, gatewayId: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await tx.delete(gateways).where(eq(gateways.id, gatewayId));
    await releaseNodes(tx, [gatewayId], "its gateway stopped");
  });
}
