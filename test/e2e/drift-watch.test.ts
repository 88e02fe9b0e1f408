// Drift seen in seconds, for real: a control plane, a real mesh-host daemon with the 300 s timer,
// a hand edit of an owned file visible through the API within a few seconds (no timer, no push),
// `onDrift: correct` corrected by itself, and `mesh-host reconcile` asking the running daemon.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { waitFor } from "../harness/wait";

const resources = [
  { type: "file", id: "motd", path: "/etc/motd", content: "managed by mesh\n", mode: "0644" },
  { type: "file", id: "app-conf", path: "/etc/app.conf", content: "port=8080\n", mode: "0644", onDrift: "report" },
];

describe.each(engines().slice(0, 1))("drift watch on %s", (engine) => {
  let cp: ControlPlane;
  let host: Host;
  let nodeId: string;
  const client = () => api(cp.url);

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    host = new Host("drift-watch");
    const token = await client().mutate("token.create", { labels: { tier: "drift" } });
    const r = host.enrol(cp.url, token.token);
    expect(r.code, r.stderr).toBe(0);
    nodeId = (await client().query("node.list")).items[0].id;
    // The 300 s timer: anything seen within seconds below was seen by the watch.
    host.run(300);
    await client().mutate("role.upsert", { name: "drift", selector: { labels: { tier: "drift" } }, resources });
    await waitFor("owned reported", async () => (await client().query("node.get", { id: nodeId })).owned.length === 2);
  });
  afterAll(async () => {
    await host?.stop();
    host?.dispose();
    await cp?.dispose();
  });

  it("a hand edit of an onDrift report file is visible through the API within seconds", async () => {
    const t0 = Date.now();
    fs.writeFileSync(host.file("/etc/app.conf"), "port=9999\n");
    const node = await waitFor(
      "drift in the API",
      async () => {
        const n = await client().query("node.get", { id: nodeId });
        return n.drift.some((d: any) => d.id === "app-conf") ? n : null;
      },
      10_000,
      50,
    );
    console.log(`edit -> drift visible in node.get: ${Date.now() - t0} ms`);
    expect(node.drift.find((d: any) => d.id === "app-conf")).toMatchObject({ corrected: false, description: expect.stringMatching(/content/) });
    expect(fs.readFileSync(host.file("/etc/app.conf"), "utf8")).toBe("port=9999\n");
  });

  it("onDrift correct: a hand edit is corrected within seconds and the correction reported", async () => {
    fs.writeFileSync(host.file("/etc/motd"), "defaced\n");
    await waitFor("motd corrected", () => fs.readFileSync(host.file("/etc/motd"), "utf8") === "managed by mesh\n", 10_000, 20);
    await waitFor(
      "the correction in the events",
      async () => {
        const n = await client().query("node.get", { id: nodeId });
        return n.events.some((e: any) => e.action === "node.drift" && e.data.entries.some((d: any) => d.id === "motd" && d.corrected));
      },
      10_000,
      100,
    );
  });

  it("mesh-host reconcile asks the running daemon and prints that reconcile's result", async () => {
    const r = await host.cliAsync(["reconcile"]);
    expect(r.stdout).toMatch(/drift file app-conf: content differs/);
    expect(r.stdout).toMatch(/declaration v\d+: .* 2 owned\n$/);
    expect(r.code).toBe(0);
  });
});
