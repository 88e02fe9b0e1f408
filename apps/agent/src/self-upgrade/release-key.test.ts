// Release signing fails closed: scripts/build.mjs run as a release engineer would, and the
// bundles it makes asked for their version, their status and a self-upgrade.
import { spawn, spawnSync } from "node:child_process";
import { createHash, generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BUILD = join(__dirname, "..", "..", "scripts", "build.mjs");
const TEST_KEY = join(__dirname, "..", "..", "..", "..", "infra", "release", "test-release-public-key.pem");
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "mesh-release-key-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the build with exactly these settings (none inherited from the test's own environment). */
function build(name: string, env: Record<string, string>) {
  const outfile = join(dir, `${name}.js`);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MESH_")));
  const r = spawnSync(process.execPath, [BUILD], { encoding: "utf8", env: { ...clean, ...env, MESH_HOST_OUTFILE: outfile } });
  return { code: r.status, stderr: r.stderr, outfile };
}

function host(bin: string, ...args: string[]) {
  const sandbox = join(dir, `sandbox-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(sandbox, "root"), { recursive: true });
  const r = spawnSync(
    process.execPath,
    [bin, ...args, ...(args[0] === "version" ? [] : ["--state-dir", join(sandbox, "state"), "--root", join(sandbox, "root")])],
    {
      encoding: "utf8",
      env: { ...process.env, MESH_LOG_LEVEL: "warn" },
      cwd: sandbox,
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, sandbox };
}

describe("release signing fails closed", () => {
  it("a build that is not a test build refuses the committed test key, by file or by value", () => {
    const byFile = build("refused-file", { MESH_RELEASE_PUBLIC_KEY_FILE: TEST_KEY });
    expect(byFile.code).toBe(1);
    expect(byFile.stderr).toMatch(/refused: the release key given is the committed test key .* only a test build \(MESH_TEST_BUILD=1\) may trust it/);
  });

  it("a build without a key trusts nothing: no test key by default, and every self-upgrade is refused with a clear error", () => {
    const b = build("no-key", {});
    expect(b.code).toBe(0);
    expect(b.stderr).toMatch(/no release key .* refuses every self-upgrade/);
    const version = host(b.outfile, "version");
    expect(version.stderr).toBe("");
    const status = JSON.parse(host(b.outfile, "status", "--json").stdout);
    expect(status).toMatchObject({ testBuild: false, releaseKey: "none" });
    expect(status.warning).toBeUndefined();
    // A release signed with the test key (or any key) is refused before anything is downloaded.
    const sha256 = createHash("sha256").update("x").digest("hex");
    const h = host(b.outfile, "version");
    const decl = join(h.sandbox, "decl.json");
    writeFileSync(
      decl,
      JSON.stringify({
        version: 1,
        resources: [
          {
            type: "host",
            id: "mesh-host",
            version: "99.0.0",
            sha256,
            signature: Buffer.alloc(64).toString("base64"),
            source: { url: "http://127.0.0.1:9/mesh-host", sha256 },
          },
        ],
      }),
    );
    const apply = host(b.outfile, "apply", "--file", decl);
    expect(apply.code).toBe(1);
    expect(apply.stdout).toMatch(
      /error mesh-host: mesh-host 99\.0\.0: this build of mesh-host has no release key built in \(built without MESH_RELEASE_PUBLIC_KEY_FILE\), so it cannot verify any release; refused/,
    );
  });

  it("a release build takes its key from MESH_RELEASE_PUBLIC_KEY_FILE and says nothing of tests", () => {
    const pub = join(dir, "release.pub.pem");
    writeFileSync(pub, generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }));
    const b = build("release", { MESH_RELEASE_BUILD: "1", MESH_RELEASE_PUBLIC_KEY_FILE: pub });
    expect(b.code).toBe(0);
    expect(b.stderr).toBe("");
    expect(JSON.parse(host(b.outfile, "status", "--json").stdout)).toMatchObject({ testBuild: false, releaseKey: "release-key" });
    expect(build("release-without-key", { MESH_RELEASE_BUILD: "1" }).code).toBe(1);
  });

  it("a test build says so loudly: in version, in status (text and --json) and in the daemon's log at every start", async () => {
    const b = build("test", { MESH_TEST_BUILD: "1" });
    expect(b.code).toBe(0);
    const version = host(b.outfile, "version");
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/); // stdout stays the version alone, for scripts
    expect(version.stderr).toMatch(/TEST BUILD: this mesh-host trusts the committed test release key .* anyone can sign a self-upgrade/);
    const text = host(b.outfile, "status");
    expect(text.stdout).toMatch(/\nWARNING: TEST BUILD: this mesh-host trusts the committed test release key/);
    expect(text.stdout).toMatch(/self-upgrade trusts the TEST release key/);
    const json = JSON.parse(host(b.outfile, "status", "--json").stdout);
    expect(json).toMatchObject({ testBuild: true, releaseKey: "test-key", warning: expect.stringMatching(/^TEST BUILD: /) });
    // The daemon's first line at start, before anything else it says.
    const daemon = spawn(process.execPath, [b.outfile, "run", "--state-dir", join(text.sandbox, "state"), "--root", join(text.sandbox, "root")], {
      env: { ...process.env, MESH_LOG_LEVEL: "warn" },
    });
    let stderr = "";
    const first = await new Promise<string>((resolve) =>
      daemon.stderr.on("data", (d: Buffer) => (stderr += d) && stderr.includes("\n") && resolve(stderr.split("\n")[0]!)),
    );
    daemon.kill("SIGTERM");
    expect(first).toMatch(/"level":40.*"testBuild":true.*TEST BUILD: /);
  });
});
