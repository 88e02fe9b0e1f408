// The whole path, for real: token -> enrol -> role -> push -> reconcile -> report,
// drift correction, removal, and a control plane that goes away and comes back.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { sleep, waitFor } from "../harness/wait";

const files = [
  { type: "file", id: "motd", path: "/etc/motd", content: "managed by mesh\n", mode: "0644" },
  { type: "file", id: "app-conf", path: "/etc/app/app.conf", content: "port=8080\n", mode: "0600" },
  { type: "file", id: "secret", path: "/etc/app/secret", content: "c2VjcmV0\n", mode: "0640" },
];
const role = (resources: unknown[]) => ({
  name: "base",
  selector: { labels: { tier: "web" } },
  resources: [{ type: "directory", id: "app-dir", path: "/etc/app", mode: "0755" }, ...resources],
});
const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8).padStart(4, "0");

describe.each(engines())("walking skeleton on %s", (engine) => {
  let cp: ControlPlane;
  let host: Host;
  let nodeId: string;
  const client = () => api(cp.url);

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    host = new Host("skeleton");
  });
  afterAll(async () => {
    await host?.stop();
    host?.dispose();
    await cp?.dispose();
  });

  it("enrols with a token issued through the API", async () => {
    const token = await client().mutate("token.create", { labels: { tier: "web" } });
    expect(token.command).toContain(token.token);
    const r = host.enrol(cp.url, token.token);
    expect(r.code, r.stderr).toBe(0);
    const { items } = await client().query("node.list");
    expect(items).toHaveLength(1);
    nodeId = items[0].id;
    expect(items[0].labels).toEqual({ tier: "web" });
    host.run(1);
    await waitFor("node enrolled", async () => (await client().query("node.get", { id: nodeId })).state === "enrolled");
  });

  it("applies a role's files with the right content and mode, and reports them owned", async () => {
    await client().mutate("role.upsert", role(files));
    await waitFor("files present", () => files.every((f) => fs.existsSync(host.file(f.path))));
    for (const f of files) {
      expect(fs.readFileSync(host.file(f.path), "utf8")).toBe(f.content);
      expect(mode(host.file(f.path))).toBe(f.mode);
    }
    const node = await waitFor("owned reported", async () => {
      const n = await client().query("node.get", { id: nodeId });
      return n.owned.length === 4 && n.appliedVersion === n.declaredVersion ? n : null;
    });
    expect(
      node.owned
        .filter((o: any) => o.type === "file")
        .map((o: any) => o.id)
        .sort(),
    ).toEqual(["app-conf", "motd", "secret"]);
  });

  it("reports drift behind its back and corrects it", async () => {
    fs.writeFileSync(host.file("/etc/motd"), "tampered\n");
    fs.chmodSync(host.file("/etc/app/app.conf"), 0o666);
    await waitFor(
      "drift corrected",
      () => fs.readFileSync(host.file("/etc/motd"), "utf8") === files[0]!.content && mode(host.file("/etc/app/app.conf")) === "0600",
    );
    const node = await waitFor("drift reported", async () => {
      const n = await client().query("node.get", { id: nodeId });
      // One summary event per report (issue 10, item 9): ids and the first entries.
      const drifted = n.events.filter((e: any) => e.action === "node.drift").flatMap((e: any) => e.data.ids);
      return drifted.includes("motd") && drifted.includes("app-conf") ? n : null;
    });
    const motd = node.events
      .filter((e: any) => e.action === "node.drift")
      .flatMap((e: any) => e.data.entries)
      .find((d: any) => d.id === "motd");
    expect(motd.corrected).toBe(true);
    expect(motd.description).toMatch(/content/);
  });

  it("removes a file dropped from the role", async () => {
    await client().mutate("role.upsert", role(files.slice(0, 2)));
    await waitFor("secret removed", () => !fs.existsSync(host.file("/etc/app/secret")));
    await waitFor("owned = 3 (dir + 2 files)", async () => {
      const n = await client().query("node.get", { id: nodeId });
      return n.owned.length === 3 && n.appliedVersion === n.declaredVersion;
    });
    expect(fs.existsSync(host.file("/etc/motd"))).toBe(true);
  });

  it("keeps correcting drift while the control plane is down, and reconnects when it is back", async () => {
    await cp.stop();
    await sleep(1500);
    fs.writeFileSync(host.file("/etc/motd"), "tampered while offline\n");
    await waitFor("drift corrected offline", () => fs.readFileSync(host.file("/etc/motd"), "utf8") === files[0]!.content);
    await cp.boot();
    await waitFor(
      "node enrolled again",
      async () => {
        const n = await client().query("node.get", { id: nodeId });
        return n.state === "enrolled" && n.appliedVersion === n.declaredVersion;
      },
      40_000,
    );
  });
});
