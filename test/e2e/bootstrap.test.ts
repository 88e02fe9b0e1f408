// First node: `mesh-host bootstrap --bundle F` applies the bundle, writes the
// one-time secret, trades it (from loopback, once) for a token and enrols; the
// bundle's resources stay declared through the `mesh-control-plane` role.
// PID 1 here is not systemd and the host has no other service backend, so the
// control plane the bundle would raise is started by the test instead.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { waitFor } from "../harness/wait";

describe("first node bootstrap", () => {
  let cp: ControlPlane;
  const host = new Host("bootstrap");
  const secretFile = "/etc/mesh/bootstrap-secret";

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine: engines()[0]!, env: { MESH_BOOTSTRAP_SECRET_FILE: path.join(host.root, secretFile) } });
  });
  afterAll(async () => {
    await host.stop();
    host.dispose();
    await cp?.dispose();
  });

  it("applies the bundle, trades the secret once for a token, enrols, and keeps the bundle declared", async () => {
    const bundle = {
      version: 1,
      controlPlane: { url: cp.url, secretFile, labels: { mesh: "control-plane" }, healthTimeoutSeconds: 30 },
      resources: [
        { type: "directory", id: "mesh-etc", path: "/etc/mesh", mode: "0700" },
        { type: "file", id: "control-plane-env", path: "/etc/mesh/control-plane.env", mode: "0600", content: "PORT=3000\n" },
      ],
    };
    const file = path.join(path.dirname(host.root), "bundle.json");
    fs.writeFileSync(file, JSON.stringify(bundle));
    const r = host.cli(["bootstrap", "--bundle", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(host.file(secretFile))).toBe(false);
    const nodeId = host.status().nodeId as string;
    const roles = await api(cp.url).query("role.list");
    expect(roles.map((x: any) => x.name)).toContain("mesh-control-plane");

    host.run(1);
    const node = await waitFor("node one enrolled and applied", async () => {
      const n = await api(cp.url).query("node.get", { id: nodeId });
      return n.state === "enrolled" && n.appliedVersion === n.declaredVersion && n.owned.length === 2 ? n : null;
    });
    expect(node.labels).toEqual({ mesh: "control-plane" });
    expect(fs.readFileSync(host.file("/etc/mesh/control-plane.env"), "utf8")).toBe("PORT=3000\n");
  });

  it("accepts a bootstrap secret only once", async () => {
    const secret = "ab".repeat(32);
    fs.writeFileSync(host.file(secretFile), `${secret}\n`, { mode: 0o600 });
    const post = () => fetch(`${cp.url}/api/bootstrap/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ secret }) });
    expect((await post()).status).toBe(201);
    const again = await post();
    expect(again.status).toBe(401);
    expect((await again.json()).message).toMatch(/already used/);
    const wrong = await fetch(`${cp.url}/api/bootstrap/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ secret: "cd".repeat(32) }) });
    expect(wrong.status).toBe(401);
  });

  it("refuses a forwarded request even from loopback", async () => {
    const res = await fetch(`${cp.url}/api/bootstrap/token`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.9" }, body: JSON.stringify({ secret: "ef".repeat(32) }) });
    expect(res.status).toBe(403);
  });
});
