// Presence: which gateway holds which node's link. State changes are written at
// once; last_seen is a batched write (cost rules in DESIGN.md).
import { and, eq, inArray, sql } from "drizzle-orm";
import { nodes, notify, CHANNELS } from "@mesh/db";
import type { Deps } from "../deps";
import { recordEvent } from "./record-event";

/** Marks nodes whose link a gateway holds; state changes are written at once. */
export async function markConnected(deps: Pick<Deps, "db">, nodeId: string, gatewayId: string, hostVersion: string) {
  await deps.db.transaction(async (tx) => {
    await tx
      .update(nodes)
      .set({ state: sql`case when ${nodes.state} = 'disconnected' then 'enrolled' else ${nodes.state} end`, gatewayId, hostVersion, lastSeenAt: sql`now()`, updatedAt: sql`now()` })
      .where(eq(nodes.id, nodeId));
    await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.connect", nodeId, data: { gatewayId } });
    await notify(tx, CHANNELS.node, nodeId);
  });
}

export async function markDisconnected(deps: Pick<Deps, "db">, nodeId: string, gatewayId: string, reason: string) {
  await deps.db.transaction(async (tx) => {
    // Only the gateway that holds the node may mark it gone: it may have reconnected elsewhere.
    const rows = await tx
      .update(nodes)
      .set({ state: sql`case when ${nodes.state} = 'enrolled' then 'disconnected' else ${nodes.state} end`, gatewayId: null, lastSeenAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(nodes.id, nodeId), eq(nodes.gatewayId, gatewayId)))
      .returning({ id: nodes.id });
    if (rows.length === 0) return;
    await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.disconnect", nodeId, data: { gatewayId, reason } });
    await notify(tx, CHANNELS.node, nodeId);
  });
}

/** The batched liveness write: at most one statement per flush for all live nodes. */
export async function touchLastSeen(deps: Pick<Deps, "db">, nodeIds: string[]) {
  if (nodeIds.length === 0) return;
  await deps.db.update(nodes).set({ lastSeenAt: sql`now()` }).where(inArray(nodes.id, nodeIds));
}
