// First node: `mesh-host bootstrap --bundle F` on a sandbox root where systemd is not PID 1.
// The bundle's service is the real control plane, run by the host's own supervisor; the host
// writes the one-time secret, trades it (from loopback, once) for a token, and enrols with the
// control plane it raised. Node one is then an ordinary node that keeps the bundle declared.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresDatabase } from "@mesh/db/testing";
import { ADMIN_API_KEY, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { REPO } from "../harness/paths";
import { waitFor } from "../harness/wait";

const UNIT = "mesh-control-plane.service";
// The host's own supervisor runs the bundle's service even on a machine where systemd is PID 1
// (a sandbox root must not start units in the machine's systemd).
const HOST_ENV = { MESH_SERVICE_MANAGER: "mesh-host" };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe("first node bootstrap", () => {
  const host = new Host("bootstrap");
  const secretFile = "/etc/mesh/bootstrap-secret";
  let url = "";
  let dropDb: (() => Promise<void>) | undefined;
  const status = () => JSON.parse(fs.readFileSync(host.file(`run/mesh-host/services/${UNIT}.json`), "utf8"));

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    let database = `MESH_DATA_DIR=${host.file("/var/lib/mesh-control-plane")}\n`;
    if (engines()[0] === "postgres") {
      const db = await createPostgresDatabase("mesh_e2e_bootstrap");
      database = `DATABASE_URL=${db.url}\n`;
      dropDb = db.drop;
    }
    // The example bundle's shape; the release is this checkout (a symlink, as /opt/mesh would be an unpacked release).
    const bundle = {
      version: 1,
      controlPlane: { url, secretFile, labels: { mesh: "control-plane" }, healthTimeoutSeconds: 150 },
      resources: [
        { type: "directory", id: "mesh-etc", path: "/etc/mesh", mode: "0700" },
        { type: "symlink", id: "release", path: "/opt/mesh", target: REPO },
        { type: "directory", id: "control-plane-data", path: "/var/lib/mesh-control-plane", mode: "0700" },
        {
          type: "file",
          id: "control-plane-env",
          path: "/etc/mesh/control-plane.env",
          mode: "0600",
          content:
            `NODE_ENV=production\nPORT=${port}\nHOST=127.0.0.1\nNEXT_TELEMETRY_DISABLED=1\n${database}` +
            `MESH_BOOTSTRAP_SECRET_FILE=${host.file(secretFile)}\nMESH_ADMIN_API_KEY=${ADMIN_API_KEY}\nMESH_ADMIN_PASSWORD=e2e-admin-password\n`,
        },
        {
          type: "service",
          id: "control-plane",
          unit: UNIT,
          after: ["control-plane-env", "control-plane-data", "release"],
          enabled: true,
          state: "running",
          content:
            "[Unit]\nDescription=Mesh control plane\nAfter=network-online.target\n\n[Service]\nType=exec\nEnvironmentFile=/etc/mesh/control-plane.env\n" +
            `WorkingDirectory=/opt/mesh/apps/web\nExecStart=${process.execPath} --import tsx src/server.ts\nRestart=always\nRestartSec=2\nProtectSystem=full\n\n[Install]\nWantedBy=multi-user.target\n`,
        },
      ],
    };
    // What any machine has already; the host never makes parents it would not own.
    for (const dir of ["/opt", "/var/lib"]) fs.mkdirSync(host.file(dir), { recursive: true });
    const file = path.join(path.dirname(host.root), "bundle.json");
    fs.writeFileSync(file, JSON.stringify(bundle));
    const started = Date.now();
    const r = host.cli(["bootstrap", "--bundle", file], HOST_ENV, 180_000);
    console.log(`bootstrap (${engines()[0]}): bundle applied, control plane started and healthy, token taken, enrolled in ${Date.now() - started} ms`);
    expect(
      r.code,
      `${r.stdout}\n${r.stderr}\n${fs.existsSync(host.file(`var/log/mesh-host/${UNIT}.log`)) ? fs.readFileSync(host.file(`var/log/mesh-host/${UNIT}.log`), "utf8").slice(-3000) : ""}`,
    ).toBe(0);
  }, 240_000);
  afterAll(async () => {
    await host.stop();
    await host.stopServices();
    host.dispose();
    await dropDb?.();
  });

  it("raises the control plane with the host's own supervisor, trades the secret once for a token, and enrols", async () => {
    const s = status();
    expect(s.state).toBe("active");
    // The service runs the control plane, in its own session, apart from the bootstrap command that started it.
    expect(fs.readFileSync(`/proc/${s.main.pid}/cmdline`, "utf8").split("\0")).toEqual(expect.arrayContaining(["--import", "tsx", "src/server.ts"]));
    expect(fs.readlinkSync(host.file(`etc/systemd/system/multi-user.target.wants/${UNIT}`))).toBe(`/etc/systemd/system/${UNIT}`);
    expect(fs.readFileSync(host.file(`var/log/mesh-host/${UNIT}.log`), "utf8")).toMatch(/not enforced without systemd: .*Service\.ProtectSystem/);
    // The secret was used and removed; the role keeps the bundle declared for node one.
    expect(fs.existsSync(host.file(secretFile))).toBe(false);
    const nodeId = host.status().nodeId as string;
    expect(nodeId).toBeTruthy();
    const roles = await api(url).query("role.list");
    expect(roles.map((x: any) => x.name)).toContain("mesh-control-plane");
  });

  it("node one runs as an ordinary node: the declaration is the bundle, applied with nothing removed or restarted", async () => {
    const before = status();
    host.run(1, HOST_ENV);
    const nodeId = host.status().nodeId as string;
    const node = await waitFor(
      "node one enrolled and applied",
      async () => {
        const n = await api(url).query("node.get", { id: nodeId });
        return n.state === "enrolled" && n.appliedVersion === n.declaredVersion && n.owned.length === 5 ? n : null;
      },
      60_000,
    );
    expect(node.labels).toEqual({ mesh: "control-plane" });
    expect(node.drift).toEqual([]);
    expect(status().main).toEqual(before.main);
  }, 90_000);

  it("the control plane outlives the host: a host that exits (as on self-upgrade) leaves it running", async () => {
    const before = status();
    await host.stop();
    expect((await fetch(`${url}/`)).status).toBeLessThan(500);
    expect(status().main).toEqual(before.main);
    host.run(1, HOST_ENV);
    const nodeId = host.status().nodeId as string;
    await waitFor("node one back", async () => (await api(url).query("node.get", { id: nodeId })).state === "enrolled", 30_000);
    expect(status().main).toEqual(before.main);
  }, 60_000);

  it("accepts a bootstrap secret only once", async () => {
    const secret = "ab".repeat(32);
    fs.writeFileSync(host.file(secretFile), `${secret}\n`, { mode: 0o600 });
    const post = () =>
      fetch(`${url}/api/bootstrap/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ secret }) });
    expect((await post()).status).toBe(201);
    const again = await post();
    expect(again.status).toBe(401);
    expect((await again.json()).message).toMatch(/already used/);
    const wrong = await fetch(`${url}/api/bootstrap/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ secret: "cd".repeat(32) }),
    });
    expect(wrong.status).toBe(401);
  });

  it("refuses a forwarded request even from loopback", async () => {
    const res = await fetch(`${url}/api/bootstrap/token`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.9" },
      body: JSON.stringify({ secret: "ef".repeat(32) }),
    });
    expect(res.status).toBe(403);
  });
});
