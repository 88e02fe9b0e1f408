// node.counts: how many nodes are in each state, and how many drift, for the
// figures at the top of the fleet page. One grouped query on an indexed column (forgotten nodes left out).
import { and, count, gt, isNull } from "drizzle-orm";
import { nodes, NODE_STATES, type NodeState } from "@mesh/db";
import type { Deps } from "../deps";

export async function countNodes(deps: Pick<Deps, "db">) {
  const rows = await deps.db.select({ state: nodes.state, n: count() }).from(nodes).where(isNull(nodes.forgottenAt)).groupBy(nodes.state);
  const byState = Object.fromEntries(NODE_STATES.map((s) => [s, 0])) as Record<NodeState, number>;
  for (const r of rows) byState[r.state] = r.n;
  const [drift] = await deps.db.select({ n: count() }).from(nodes).where(and(gt(nodes.driftCount, 0), isNull(nodes.forgottenAt)));
  return { byState, total: rows.reduce((a, r) => a + r.n, 0), drifting: drift?.n ?? 0 };
}
