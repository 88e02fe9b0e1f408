// The control plane's Prometheus figures (issue 13). Counters live where the events happen, each a
// one-line `metrics.x.inc()`; the web server exposes the registry at /metrics (apps/web server/metrics-route.ts).
// Next bundles route handlers apart from server.ts, so a module singleton is not shared between them:
// the registry is held on globalThis under a Symbol.for key (as server/runtime.ts does), one per process.
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";

function build() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  /** What the gateway holds now, read at scrape time (set by the gateway; 0 on a web-only instance). */
  let linksSource: () => number = () => 0;
  return {
    registry,
    setLinksSource(source: () => number) {
      linksSource = source;
    },
    linksHeld: new Gauge({
      name: "mesh_links_held",
      help: "Host links this instance's gateway holds now",
      registers,
      collect() {
        this.set(linksSource());
      },
    }),
    nodes: new Gauge({
      name: "mesh_nodes",
      help: "Nodes per state, fleet-wide (one grouped count per scrape, cached)",
      labelNames: ["state"] as const,
      registers,
    }),
    /** Nodes per health (healthy, drifted, failing, ...): fed by setNodeHealthCounts once node health lands. */
    nodeHealth: new Gauge({ name: "mesh_nodes_health", help: "Nodes per health, fleet-wide", labelNames: ["health"] as const, registers }),
    enrolments: new Counter({
      name: "mesh_enrolments_total",
      help: "Enrolments answered by this instance, by result (enrolled, pending, refused)",
      labelNames: ["result"] as const,
      registers,
    }),
    framesSent: new Counter({
      name: "mesh_link_frames_sent_total",
      help: "Frames this gateway sent to hosts, by type (declaration pushes included)",
      labelNames: ["type"] as const,
      registers,
    }),
    reportsStored: new Counter({ name: "mesh_reports_stored_total", help: "Host reports written to the database", registers }),
    reportsUnchanged: new Counter({
      name: "mesh_reports_unchanged_total",
      help: "Host reports equal to the stored one (acked with no write beyond the batched last-checked)",
      registers,
    }),
    reconcileErrors: new Counter({ name: "mesh_reconcile_errors_reported_total", help: "Resource errors carried by the reports hosts sent", registers }),
    busGaps: new Counter({
      name: "mesh_bus_gaps_total",
      help: "Times a change-bus subscription came back after a lost connection (notifications may have been missed)",
      labelNames: ["channel"] as const,
      registers,
    }),
    alertDeliveries: new Counter({
      name: "mesh_alert_deliveries_total",
      help: "Webhook delivery attempts, by outcome (delivered, retry, failed)",
      labelNames: ["outcome"] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof build>;

const KEY = Symbol.for("mesh.metrics");
type Holder = { [KEY]?: Metrics };

function instance(): Metrics {
  const holder = globalThis as Holder;
  return (holder[KEY] ??= build());
}

export const metrics: Metrics = new Proxy({} as Metrics, { get: (_t, name) => instance()[name as keyof Metrics] });

/** Replaces a per-label gauge's values with a counts map (a label missing from the map is dropped). */
export function setCounts(gauge: Gauge<string>, label: string, counts: Record<string, number>): void {
  gauge.reset();
  for (const [value, n] of Object.entries(counts)) gauge.set({ [label]: value }, n);
}

/** Nodes per state (a map from one grouped count). */
export function setNodeStateCounts(counts: Record<string, number>): void {
  setCounts(metrics.nodes, "state", counts);
}

/**
 * Nodes per health: THE spot for node health (issue 13's healthy / drifted / failing / conflicted /
 * stale, defined elsewhere). When health lands, the scrape's fleet count passes its map here: one line.
 */
export function setNodeHealthCounts(counts: Record<string, number>): void {
  setCounts(metrics.nodeHealth, "health", counts);
}
