// Node one: the bundle is applied, the secret is written 0600 and traded once over
// loopback for a token, and the host enrols; a bundle pointing off the machine is refused.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../log";
import { startControlPlane } from "../link/fake-control-plane";
import { loadIdentity } from "../state-dir/identity";
import { DiskStore } from "../store/disk-store";
import { bootstrapCommand } from "./bootstrap";
import { readBundleFile } from "./bootstrap-bundle";
import { tempDirs } from "../testing/temp-dirs";

const freshDir = tempDirs("mesh-boot-");

function machine() {
  const base = freshDir();
  const root = join(base, "root");
  mkdirSync(join(root, "etc"), { recursive: true });
  return { root, stateDir: join(base, "state"), base };
}

function bundle(base: string, url: string): string {
  const file = join(base, "bundle.json");
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      controlPlane: { url, secretFile: "/etc/mesh/bootstrap-secret", labels: { mesh: "control-plane" }, healthTimeoutSeconds: 5 },
      resources: [
        { type: "directory", id: "mesh-etc", path: "/etc/mesh", mode: "0700" },
        {
          type: "file",
          id: "cp-env",
          path: "/etc/mesh/control-plane.env",
          content: "PORT=3000\nMESH_BOOTSTRAP_SECRET_FILE=/etc/mesh/bootstrap-secret\n",
          mode: "0600",
        },
      ],
    }),
  );
  return file;
}

describe("bootstrap", () => {
  it("applies the bundle, trades the one-time secret over loopback, and enrols", async () => {
    const m = machine();
    const cp = await startControlPlane(null, () => undefined);
    try {
      cp.bootstrapSecretFile = join(m.root, "etc/mesh/bootstrap-secret");
      const stderr = process.stderr.write;
      process.stderr.write = () => true; // the --insecure warning of a loopback http control plane
      let code;
      try {
        code = await bootstrapCommand({ root: m.root, stateDir: m.stateDir, intervalMs: 1000, bundle: bundle(m.base, cp.url), log: silentLogger() });
      } finally {
        process.stderr.write = stderr;
      }
      expect(code).toBe(0);
      expect(readFileSync(join(m.root, "etc/mesh/control-plane.env"), "utf8")).toContain("PORT=3000");
      expect(statSync(join(m.root, "etc/mesh")).mode & 0o777).toBe(0o700);
      expect(cp.bootstrapTokens).toBe(1);
      expect(cp.enrolments).toHaveLength(1);
      // Used once: gone from the disk.
      expect(existsSync(join(m.root, "etc/mesh/bootstrap-secret"))).toBe(false);
      const identity = await loadIdentity(new DiskStore(m.stateDir));
      expect(identity.kind).toBe("ok");
    } finally {
      await cp.close();
    }
  });

  it("reads the example bundle shipped in infra/bootstrap", async () => {
    const b = await readBundleFile(join(__dirname, "..", "..", "..", "..", "infra", "bootstrap", "control-plane.bundle.json"));
    expect(b.controlPlane.url).toBe("http://127.0.0.1:3000");
    expect(b.resources.map((r) => r.type)).toContain("service");
  });

  it("refuses a bundle whose control plane is not on this machine", async () => {
    const m = machine();
    await expect(
      bootstrapCommand({ root: m.root, stateDir: m.stateDir, intervalMs: 1000, bundle: bundle(m.base, "http://10.0.0.5:3000"), log: silentLogger() }),
    ).rejects.toThrow(/127\.0\.0\.1, \[::1\] or localhost/);
  });

  it("says so when the control plane has no bootstrap endpoint", async () => {
    const m = machine();
    const cp = await startControlPlane(null, () => undefined);
    try {
      await expect(
        bootstrapCommand({ root: m.root, stateDir: m.stateDir, intervalMs: 1000, bundle: bundle(m.base, cp.url), log: silentLogger() }),
      ).rejects.toThrow(/no \/api\/bootstrap\/token endpoint/);
    } finally {
      await cp.close();
    }
  });
});
