// The fleet-wide figures a scrape shows: ONE grouped count over nodes per scrape, cached for a few
// seconds so several Prometheus servers (or a scrape storm) cost one query per window, never one per node.
import type { Deps } from "../deps";
import { countNodes } from "../services/count-nodes";
import { setNodeHealthCounts, setNodeStateCounts } from "./metrics";

export const FLEET_FIGURES_TTL_MS = 5_000;

/** Refreshes the fleet gauges at most once per ttl; concurrent scrapes share one query. */
export function fleetFigures(deps: Pick<Deps, "db">, ttlMs = FLEET_FIGURES_TTL_MS) {
  let fresh = 0;
  let inFlight: Promise<void> | null = null;
  return async function refresh(): Promise<void> {
    if (Date.now() - fresh < ttlMs) return;
    inFlight ??= (async () => {
      try {
        // The dashboard's own count (node.counts): one grouped query for states and health alike.
        const counts = await countNodes(deps);
        setNodeStateCounts(counts.byState);
        setNodeHealthCounts(counts.byHealth);
        fresh = Date.now();
      } finally {
        inFlight = null;
      }
    })();
    return inFlight;
  };
}
