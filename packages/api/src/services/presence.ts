// Presence: which gateway holds which node's link. State changes are written at
// once; last_seen is a batched write (cost rules in DESIGN.md).
import { and, eq, inArray, lt, notInArray, sql } from "drizzle-orm";
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
export async function markConnected(deps: Pick<Deps, "db">, nodeId: string, gatewayId: string, hostVersion: string, audit: LinkAudit = {}, publicKey?: string): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(nodes)
      .set({ state: sql`case when ${nodes.state} = 'disconnected' then 'enrolled' else ${nodes.state} end`, gatewayId, hostVersion, lastSeenAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(nodes.id, nodeId), notInArray(nodes.state, ["revoked", "retired", "pending"]), ...(publicKey ? [eq(nodes.publicKey, publicKey)] : [])))
      .returning({ id: nodes.id });
    if (rows.length === 0) return false;
    if (audit.audit !== false) await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.connect", nodeId, data: { gatewayId, ...(audit.suppressed ? { suppressedEvents: audit.suppressed } : {}) } });
    await notify(tx, CHANNELS.node, nodeId);
    return true;
  });
}

export async function markDisconnected(deps: Pick<Deps, "db">, nodeId: string, gatewayId: string, reason: string, audit: LinkAudit = {}) {
  await deps.db.transaction(async (tx) => {
    // Only the gateway that holds the node may mark it gone: it may have reconnected elsewhere.
    const rows = await tx
      .update(nodes)
      .set({ state: sql`case when ${nodes.state} = 'enrolled' then 'disconnected' else ${nodes.state} end`, gatewayId: null, lastSeenAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(nodes.id, nodeId), eq(nodes.gatewayId, gatewayId)))
      .returning({ id: nodes.id });
    if (rows.length === 0) return;
    if (audit.audit !== false) await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.disconnect", nodeId, data: { gatewayId, reason } });
    await notify(tx, CHANNELS.node, nodeId);
  });
}

/** The batched liveness write: at most one statement per flush for all live nodes. */
export async function touchLastSeen(deps: Pick<Deps, "db">, nodeIds: string[]) {
  if (nodeIds.length === 0) return;
  await deps.db.update(nodes).set({ lastSeenAt: sql`now()` }).where(inArray(nodes.id, nodeIds));
}

/** A gateway instance says it is alive. */
export async function beatGateway(deps: Pick<Deps, "db">, gatewayId: string): Promise<void> {
  await deps.db.insert(gateways).values({ id: gatewayId }).onConflictDoUpdate({ target: gateways.id, set: { heartbeatAt: sql`now()` } });
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
  const orphaned = await tx
    .update(nodes)
    .set({ state: sql`case when ${nodes.state} = 'enrolled' then 'disconnected' else ${nodes.state} end`, gatewayId: null, updatedAt: sql`now()` })
    .where(inArray(nodes.gatewayId, gatewayIds))
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
