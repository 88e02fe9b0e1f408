// The fleet-wide figures a scrape shows: ONE grouped count over nodes per scrape, cached for a few
// seconds so several Prometheus servers (or a scrape storm) cost one query per window, never one per node.
import { count } from "drizzle-orm";
import { nodes, NODE_STATES } from "@mesh/db";
import type { Deps } from "../deps";
import { setNodeStateCounts } from "./metrics";

export const FLEET_FIGURES_TTL_MS = 5_000;

/** One grouped count: nodes per state (every state listed, 0 included). */
export async function nodesPerState(deps: Pick<Deps, "db">): Promise<Record<string, number>> {
  const rows = await deps.db.select({ state: nodes.state, n: count() }).from(nodes).groupBy(nodes.state);
  const byState: Record<string, number> = Object.fromEntries(NODE_STATES.map((s) => [s, 0]));
  for (const r of rows) byState[r.state] = r.n;
  return byState;
}

/** Refreshes the fleet gauges at most once per ttl; concurrent scrapes share one query. */
export function fleetFigures(deps: Pick<Deps, "db">, ttlMs = FLEET_FIGURES_TTL_MS) {
  let fresh = 0;
  let inFlight: Promise<void> | null = null;
  return async function refresh(): Promise<void> {
    if (Date.now() - fresh < ttlMs) return;
    inFlight ??= (async () => {
      try {
        setNodeStateCounts(await nodesPerState(deps));
        fresh = Date.now();
      } finally {
        inFlight = null;
      }
    })();
    return inFlight;
  };
}
