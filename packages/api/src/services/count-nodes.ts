// node.counts: how many nodes are in each state and each health, and how many drift, for the
// figures at the top of the fleet page. One grouped query over the nodes rows (no join; forgotten nodes left out).
import { count, isNull, sql } from "drizzle-orm";
import { nodes, NODE_STATES, type NodeState } from "@mesh/db";
import type { Deps } from "../deps";
import { NODE_HEALTHS, nodeHealth, type NodeHealth } from "./node-health";

export async function countNodes(deps: Pick<Deps, "db">) {
  const rows = await deps.db
    .select({ state: nodes.state, health: nodeHealth, n: count(), drifting: sql<number>`count(*) filter (where ${nodes.driftCount} > 0)`.mapWith(Number) })
    .from(nodes)
    .where(isNull(nodes.forgottenAt))
    .groupBy(nodes.state, sql`2`);
  const byState = Object.fromEntries(NODE_STATES.map((s) => [s, 0])) as Record<NodeState, number>;
  const byHealth = Object.fromEntries(NODE_HEALTHS.map((h) => [h, 0])) as Record<NodeHealth, number>;
  for (const r of rows) {
    byState[r.state] += r.n;
    if (r.health) byHealth[r.health] += r.n;
  }
  return { byState, byHealth, total: rows.reduce((a, r) => a + r.n, 0), drifting: rows.reduce((a, r) => a + r.drifting, 0) };
}
