// The package provider through whole reconciles, with the real dpkg in a sandbox
// root and .debs built here and served over HTTP: create, no-op, update, drift, adopt/restore, remove.
import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Declaration, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import { reconcile } from "../reconcile/reconcile";
import { MemoryStore } from "../store/memory-store";
import { sha256Hex } from "./observed";
import { Root } from "./root";
import type { SelfUpgrade } from "../self-upgrade/self-upgrade";

let base: string;
let server: Server;
let url: string;
const debs = new Map<string, Buffer>();

function buildDeb(name: string, version: string): void {
  const dir = join(base, "build", `${name}_${version}`);
  mkdirSync(join(dir, "DEBIAN"), { recursive: true });
  mkdirSync(join(dir, "usr/share/mesh-test"), { recursive: true });
  writeFileSync(
    join(dir, "DEBIAN/control"),
    `Package: ${name}\nVersion: ${version}\nArchitecture: all\nMaintainer: Mesh tests <tests@mesh.invalid>\nDescription: test\n`,
  );
  writeFileSync(join(dir, `usr/share/mesh-test/${name}`), `${version}\n`);
  const deb = join(base, `${name}_${version}_all.deb`);
  const r = spawnSync("dpkg-deb", ["--root-owner-group", "--build", dir, deb], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  debs.set(`${name}_${version}_all.deb`, readFileSync(deb));
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "mesh-pkgrec-"));
  buildDeb("mesh-demo", "1.0");
  buildDeb("mesh-demo", "2.0");
  buildDeb("mesh-host", "1.0");
  buildDeb("mesh-host", "2.0");
  server = createServer((req, res) => {
    const body = debs.get((req.url ?? "").replace("/api/files/", ""));
    res.statusCode = body ? 200 : 404;
    res.end(body ?? "");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(base, { recursive: true, force: true });
});

let root: string;
let store: MemoryStore;
beforeEach(() => {
  root = mkdtempSync(join(base, "root-"));
  mkdirSync(join(root, "var/lib/dpkg/info"), { recursive: true });
  mkdirSync(join(root, "var/lib/dpkg/updates"), { recursive: true });
  writeFileSync(join(root, "var/lib/dpkg/status"), "");
  store = new MemoryStore();
});

const demo = (version: string, extra: Record<string, unknown> = {}): ResourceInput =>
  ({
    type: "package",
    id: "demo",
    name: "mesh-demo",
    version,
    source: { url: `/api/files/mesh-demo_${version}_all.deb`, sha256: sha256Hex(debs.get(`mesh-demo_${version}_all.deb`)!) },
    ...extra,
  }) as ResourceInput;
const run = (resources: ResourceInput[], version = 1) =>
  reconcile(
    {
      store,
      root: new Root(root),
      log: silentLogger(),
      enrolled: true,
      controlPlane: { url, nodeId: "00000000-0000-4000-8000-000000000000", privateKey: generateKeyPairSync("ed25519").privateKey },
    },
    { declaration: Declaration.parse({ version, resources }) },
  );
const shipped = () =>
  existsSync(join(root, "usr/share/mesh-test/mesh-demo")) ? readFileSync(join(root, "usr/share/mesh-test/mesh-demo"), "utf8").trim() : null;
const dpkg = (...args: string[]) => spawnSync("dpkg", [`--root=${root}`, `--log=${join(root, "var/log/dpkg.log")}`, ...args], { encoding: "utf8" });

const own = (version: string): ResourceInput =>
  ({
    type: "package",
    id: "self",
    name: "mesh-host",
    version,
    source: { url: `/api/files/mesh-host_${version}_all.deb`, sha256: sha256Hex(debs.get(`mesh-host_${version}_all.deb`)!) },
  }) as ResourceInput;
const ownInstalled = () => dpkg("-s", "mesh-host").stdout.match(/^Version: (.*)$/m)?.[1] ?? null;

describe("the host's own package (mesh-host) is never removed by the host", () => {
  it("refuses it declared absent, with a clear error, and leaves it installed", async () => {
    mkdirSync(join(root, "var/log"), { recursive: true });
    const declareAbsent = (version: number) => run([{ type: "package", id: "self", name: "mesh-host", state: "absent" } as ResourceInput], version);
    // Not installed (a tarball host): refused all the same, as the declaration is wrong for every host.
    expect((await declareAbsent(1)).report.errors).toEqual([
      expect.objectContaining({ id: "self", message: expect.stringMatching(/cannot be declared absent/) }),
    ]);
    expect(dpkg("-i", join(base, "mesh-host_1.0_all.deb")).status).toBe(0);
    const absent = await declareAbsent(2);
    expect(absent.report.errors).toEqual([
      expect.objectContaining({ id: "self", message: expect.stringMatching(/mesh-host cannot be declared absent: it is the host itself/) }),
    ]);
    expect(ownInstalled()).toBe("1.0");
  });

  it("installed by the host: leaving the declaration releases it, left installed", async () => {
    mkdirSync(join(root, "var/log"), { recursive: true });
    const first = await run([own("1.0")]);
    expect(first.report.errors).toEqual([]);
    expect(ownInstalled()).toBe("1.0");
    const left = await run([], 2);
    expect(left.report.errors).toEqual([]);
    expect(left.changes).toEqual([expect.objectContaining({ kind: "released", id: "self", detail: expect.stringMatching(/left installed/) })]);
    expect(left.report.owned).toEqual([]);
    expect(ownInstalled()).toBe("1.0");
  });

  it("adopted at 1.0 and upgraded to 2.0: leaving releases it at 2.0, never putting 1.0 back", async () => {
    mkdirSync(join(root, "var/log"), { recursive: true });
    const old = join(base, "mesh-host_1.0_all.deb");
    expect(dpkg("-i", old).status).toBe(0);
    mkdirSync(join(root, "var/cache/apt/archives"), { recursive: true });
    copyFileSync(old, join(root, "var/cache/apt/archives/mesh-host_1.0_all.deb"));
    const adopted = await run([own("2.0")]);
    expect(adopted.changes.map((c) => c.kind)).toEqual(["adopted"]);
    expect(ownInstalled()).toBe("2.0");
    const left = await run([], 2);
    expect(left.report.errors).toEqual([]);
    expect(left.changes.map((c) => c.kind)).toEqual(["released"]);
    expect(left.report.owned).toEqual([]);
    expect(ownInstalled()).toBe("2.0");
  });
});

describe("package provider through reconcile (real dpkg, sandbox root)", () => {
  it("creates, is a no-op, updates, and removes what it installed", async () => {
    const first = await run([demo("1.0")]);
    expect(first.report.errors).toEqual([]);
    expect(first.changes.map((c) => c.kind)).toEqual(["created"]);
    expect(shipped()).toBe("1.0");
    expect(first.report.owned).toEqual([expect.objectContaining({ id: "demo", type: "package" })]);
    expect(first.report.owned[0]!.adopted).toBeUndefined();

    const again = await run([demo("1.0")]);
    expect(again.changes).toEqual([]);

    const upgraded = await run([demo("2.0")], 2);
    expect(upgraded.changes.map((c) => c.kind)).toEqual(["updated"]);
    expect(upgraded.report.drift).toEqual([]);
    expect(shipped()).toBe("2.0");

    const gone = await run([], 3);
    expect(gone.changes.map((c) => c.kind)).toEqual(["removed"]);
    expect(shipped()).toBeNull();
  });

  it("drift: corrects a package removed behind its back, or only reports it", async () => {
    mkdirSync(join(root, "var/log"), { recursive: true });
    await run([demo("1.0")]);
    dpkg("--remove", "mesh-demo");
    const corrected = await run([demo("1.0")]);
    expect(corrected.report.drift).toEqual([
      expect.objectContaining({ id: "demo", type: "package", description: expect.stringMatching(/declared 1\.0|declared installed/), corrected: true }),
    ]);
    expect(shipped()).toBe("1.0");

    dpkg("--remove", "mesh-demo");
    for (let i = 0; i < 2; i++) {
      const reported = await run([demo("1.0", { onDrift: "report" })]);
      expect(reported.report.drift).toEqual([expect.objectContaining({ id: "demo", corrected: false })]);
      expect(shipped()).toBeNull();
    }
  });

  it("adopts a package that was installed at 1.0, applies 2.0, and restores 1.0 when it leaves", async () => {
    mkdirSync(join(root, "var/log"), { recursive: true });
    const old = join(base, "mesh-demo_1.0_all.deb");
    expect(dpkg("-i", old).status).toBe(0);
    // Where restore finds the original version's .deb, as apt would have left it.
    mkdirSync(join(root, "var/cache/apt/archives"), { recursive: true });
    copyFileSync(old, join(root, "var/cache/apt/archives/mesh-demo_1.0_all.deb"));
    const adopted = await run([demo("2.0")]);
    expect(adopted.changes.map((c) => c.kind)).toEqual(["adopted"]);
    expect(adopted.report.owned).toEqual([expect.objectContaining({ id: "demo", adopted: true })]);
    expect(shipped()).toBe("2.0");
    const left = await run([], 2);
    expect(left.report.errors).toEqual([]);
    expect(left.changes.map((c) => c.kind)).toEqual(["restored"]);
    expect(shipped()).toBe("1.0");
  });

  it("declared absent where it was absent: leaving takes nothing, even what someone installed since", async () => {
    mkdirSync(join(root, "var/log"), { recursive: true });
    const absent = { type: "package", id: "demo", name: "mesh-demo", state: "absent" } as ResourceInput;
    const first = await run([absent]);
    expect(first.report.errors).toEqual([]);
    expect(first.changes.map((c) => c.kind)).toEqual(["created"]);
    expect(dpkg("-i", join(base, "mesh-demo_1.0_all.deb")).status).toBe(0);
    const left = await run([], 2);
    expect(left.report.errors).toEqual([]);
    expect(shipped()).toBe("1.0");
  });
});

describe("dpkg's record after a rolled-back upgrade of the host's own package", () => {
  it("is tried again before each reconcile of packages; while it still cannot be (a lock, a mirror down) the report says so, as an error the loop retries", async () => {
    let tries = 0;
    const selfUpgrade = {
      async settleHostPackage() {
        tries++;
        return tries === 1 ? "mesh-host 2.0 was rolled back, but dpkg's record is not yet back to 1.0 (tried again): dpkg is busy" : null;
      },
    } as unknown as SelfUpgrade;
    const deps = {
      store,
      root: new Root(root),
      log: silentLogger(),
      enrolled: true,
      controlPlane: { url, nodeId: "00000000-0000-4000-8000-000000000000", privateKey: generateKeyPairSync("ed25519").privateKey },
      selfUpgrade,
    };
    const first = await reconcile(deps, { declaration: Declaration.parse({ version: 1, resources: [demo("1.0")] }) });
    expect(first.report.errors).toEqual([{ id: null, message: expect.stringMatching(/dpkg's record is not yet back to 1\.0 \(tried again\)/) }]);
    const second = await reconcile(deps, { declaration: Declaration.parse({ version: 1, resources: [demo("1.0")] }) });
    expect(second.report.errors).toEqual([]);
    expect(tries).toBe(2);
  });
});
