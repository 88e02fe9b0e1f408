// /healthz and /readyz (issue 13) on a real control plane whose Postgres sits behind a TCP proxy the
// test controls: ready while the database answers; with packets dropped /readyz says 503 and why,
// while /healthz (no database call) stays 200; ready again once the database answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlane } from "../harness/control-plane";
import { startProxiedControlPlane, type ProxiedControlPlane } from "../harness/proxied-postgres";
import type { TcpProxy } from "../harness/tcp-proxy";
import { waitFor } from "../harness/wait";

describe("health endpoints", () => {
  let db: ProxiedControlPlane;
  let proxy: TcpProxy;
  let cp: ControlPlane;

  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${cp.url}${path}`, init);
    return { status: res.status, type: res.headers.get("content-type"), body: (await res.text()) as string };
  };

  beforeAll(async () => {
    db = await startProxiedControlPlane();
    ({ proxy, cp } = db);
  });
  afterAll(async () => {
    await db?.dispose();
  });

  it("answers ready with every check named", async () => {
    const health = await get("/healthz");
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: "ok" });
    const ready = await get("/readyz");
    expect(ready.status, ready.body).toBe(200);
    expect(ready.type).toMatch(/application\/json/);
    expect(JSON.parse(ready.body)).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", bus: "ok" } });
    expect((await get("/readyz", { method: "POST" })).status).toBe(405);
  });

  it("is not ready while the database does not answer, and ready again when it does; /healthz stays up", async () => {
    proxy.setMode("blackhole");
    try {
      const notReady = await waitFor("readyz 503", async () => {
        const r = await get("/readyz");
        return r.status === 503 ? r : null;
      });
      const body = JSON.parse(notReady.body);
      expect(body.status).toBe("not ready");
      expect(body.reason).toMatch(/^database: /);
      expect(body.checks.migrations).toBe("ok");
      expect((await get("/healthz")).status).toBe(200);
    } finally {
      proxy.setMode("pass");
    }
    await waitFor("readyz 200 again", async () => (await get("/readyz")).status === 200, 30_000);
  });

  it("does not serve /metrics when neither MESH_METRICS_TOKEN nor MESH_METRICS_ADDRESS is set", async () => {
    const r = await get("/metrics");
    expect(r.status).toBe(404);
    expect(r.body).not.toMatch(/mesh_links_held|process_cpu/);
  });
});
