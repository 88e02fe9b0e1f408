// /metrics (issue 13): scraped and parsed by a real Prometheus text parser; behind a bearer token on
// the main port and served on a separate address; the figures move (enrol a host: enrolments +1; link it:
// links 1, nodes{state=enrolled} 1; it reports: reports stored +1 and its errors counted).
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { ControlPlane } from "../harness/control-plane";
import { api } from "../harness/api";
import { connectFake, enrolFake } from "../harness/link";
import { sample, scrape } from "../harness/metrics";
import { waitFor } from "../harness/wait";

const TOKEN = "metrics-token-0123456789abcdef";

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("metrics", () => {
  let cp: ControlPlane;
  let metricsUrl: string;
  let ws: WebSocket | undefined;

  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    cp = await ControlPlane.start({
      engine: process.env.DATABASE_URL ? "postgres" : "pglite",
      env: { MESH_METRICS_TOKEN: TOKEN, MESH_METRICS_ADDRESS: `127.0.0.1:${port}` },
    });
  });
  afterAll(async () => {
    ws?.close();
    await cp?.dispose();
  });

  it("refuses a scrape without the token on the main port", async () => {
    expect((await fetch(`${cp.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${cp.url}/metrics`, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
    expect((await fetch(`${cp.url}/metrics`, { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    // The separate listener serves /metrics only, and with a token set it asks for it too.
    expect((await fetch(metricsUrl.replace("/metrics", "/"))).status).toBe(404);
    expect((await fetch(metricsUrl)).status).toBe(401);
  });

  it("moves as a host enrols, links and reports", async () => {
    const before = await scrape(`${cp.url}/metrics`, TOKEN);
    for (const name of [
      "mesh_links_held",
      "mesh_nodes",
      "mesh_enrolments_total",
      "mesh_link_frames_sent_total",
      "mesh_reports_stored_total",
      "mesh_reports_unchanged_total",
      "mesh_reconcile_errors_reported_total",
      "mesh_bus_gaps_total",
      "process_cpu_user_seconds_total",
      "nodejs_heap_size_used_bytes",
    ]) {
      expect(
        before.some((f) => f.name === name),
        name,
      ).toBe(true);
    }
    expect(sample(before, "mesh_links_held")).toBe(0);
    const enrolled = sample(before, "mesh_enrolments_total", { result: "enrolled" });

    const { token } = await api(cp.url).mutate("token.create", {});
    const host = await enrolFake(cp.url, token);
    const afterEnrol = await scrape(metricsUrl, TOKEN);
    expect(sample(afterEnrol, "mesh_enrolments_total", { result: "enrolled" })).toBe(enrolled + 1);

    ws = await connectFake(cp.url, host);
    const declared = (await new Promise<{ declaration: { version: number } }>((resolve) => ws!.once("message", (d) => resolve(JSON.parse(String(d))))))
      .declaration;
    const linked = await waitFor("links 1 and the node enrolled", async () => {
      const s = await scrape(metricsUrl, TOKEN);
      return sample(s, "mesh_links_held") === 1 && sample(s, "mesh_nodes", { state: "enrolled" }) === 1 ? s : null;
    });
    expect(sample(linked, "mesh_link_frames_sent_total", { type: "declaration" })).toBeGreaterThanOrEqual(1);

    const stored = sample(linked, "mesh_reports_stored_total");
    const errors = sample(linked, "mesh_reconcile_errors_reported_total");
    const report = {
      declarationVersion: declared.version,
      owned: [],
      drift: [],
      errors: [{ id: "f", message: "permission denied" }],
      skipped: [],
      storeLost: false,
      reconciledAt: new Date().toISOString(),
    };
    ws.send(JSON.stringify({ type: "report", seq: 1, report }));
    const after = await waitFor("the report counted", async () => {
      const s = await scrape(metricsUrl, TOKEN);
      return sample(s, "mesh_reports_stored_total") === stored + 1 ? s : null;
    });
    expect(sample(after, "mesh_reconcile_errors_reported_total")).toBe(errors + 1);
  });
});
