// Shipping the host: the single binary runs with nothing else; the tarball's
// install.sh needs only sh, tar and coreutils; the .deb installs with dpkg into a
// sandbox root, passes lintian, upgrades N -> N+1 keeping the node's identity;
// the unit passes systemd-analyze verify with empty stderr; the binary upgrades itself
// from a signed release and the unit's rollback step puts the old one back.
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash, createPrivateKey, sign } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostReleaseMessage } from "@mesh/protocol";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { buildArtifacts, type Artifacts } from "../harness/packaging";
import { waitFor } from "../harness/wait";
import { REPO } from "../harness/paths";

const HOST_VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, "apps/agent/package.json"), "utf8")) as { version: string }).version;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-pkg-"));
const sh = (cmd: string, args: string[], opts: Parameters<typeof spawnSync>[2] = {}) => {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 120_000, ...opts });
  return { code: r.status, stdout: String(r.stdout ?? ""), stderr: String(r.stderr ?? "") };
};

/** A directory of links to sh, tar and every coreutils program: all install.sh may use. */
function minimalPath(): string {
  const dir = path.join(tmp, "minimal-bin");
  if (fs.existsSync(dir)) return dir;
  fs.mkdirSync(dir, { recursive: true });
  const coreutils = execFileSync("dpkg", ["-L", "coreutils"], { encoding: "utf8" })
    .split("\n")
    .filter((p) => /^\/(usr\/)?bin\/[^/]+$/.test(p));
  for (const p of [...coreutils, "/bin/sh", "/bin/tar"]) {
    const target = fs.existsSync(p) ? p : p.replace(/^\/bin/, "/usr/bin");
    if (fs.existsSync(target)) fs.symlinkSync(target, path.join(dir, path.basename(p)));
  }
  return dir;
}

function dpkgSandbox(name: string): string {
  const root = path.join(tmp, name);
  fs.mkdirSync(path.join(root, "var/lib/dpkg/info"), { recursive: true });
  fs.mkdirSync(path.join(root, "var/lib/dpkg/updates"), { recursive: true });
  fs.writeFileSync(path.join(root, "var/lib/dpkg/status"), "");
  return root;
}

// The sandbox has no libc registered with its dpkg, so dependencies are forced there.
const dpkgInstall = (root: string, deb: string) =>
  sh("dpkg", [`--root=${root}`, "--force-depends", "--force-script-chrootless", `--log=${root}/var/log/dpkg.log`, "-i", deb]);

describe("packaging", () => {
  let n: Artifacts;
  let n1: Artifacts;
  let cp: ControlPlane;

  beforeAll(async () => {
    // N is this checkout's version (the one the control plane serves); N+1 sorts after it for dpkg.
    n = buildArtifacts(HOST_VERSION, path.join(tmp, "n"));
    n1 = buildArtifacts(`${HOST_VERSION}.1`, path.join(tmp, "n1"));
    console.log(
      `binary ${(n.binaryBytes / 1e6).toFixed(1)} MB (${(n.binaryGzipBytes / 1e6).toFixed(1)} MB gzipped), tarball ${(n.tarballBytes / 1e6).toFixed(1)} MB, .deb ${(n.debBytes / 1e6).toFixed(1)} MB`,
    );
    cp = await ControlPlane.start({ engine: engines()[0]!, env: { MESH_ARTIFACTS_DIR: path.join(tmp, "n") } });
    await api(cp.url).mutate("role.upsert", {
      name: "pkg",
      selector: { labels: { pkg: "yes" } },
      resources: [{ type: "file", id: "hello", path: "/etc/hello.conf", content: "from the installed binary\n", mode: "0640" }],
    });
  }, 600_000);
  afterAll(async () => {
    await cp?.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("runs the single binary with no node on PATH", () => {
    const r = sh(n.binary, ["version"], { env: { PATH: "/nonexistent" } });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(HOST_VERSION);
  });

  it("serves its own version's artifacts and an install.sh that checks and installs the tarball", async () => {
    const res = await fetch(`${cp.url}/download/${path.basename(n.tarball)}`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(fs.readFileSync(n.tarball))).toBe(true);
    expect((await fetch(`${cp.url}/download/nothing-here`)).status).toBe(404);
    const script = await (await fetch(`${cp.url}/download/install.sh`)).text();
    const root = path.join(tmp, "served-root");
    fs.mkdirSync(root);
    const r = sh("sh", ["-s", "--", "--root", root], { input: script });
    expect(r.code, r.stderr).toBe(0);
    expect(sh(path.join(root, "usr/local/bin/mesh-host"), ["version"]).stdout.trim()).toBe(HOST_VERSION);
  });

  it("installs the tarball with only sh, tar and coreutils, and the installed host enrols and applies", async () => {
    const bin = minimalPath();
    const root = path.join(tmp, "tar-root");
    fs.mkdirSync(path.join(root, "etc"), { recursive: true });
    // Unpacking needs gzip besides tar (that is the operator's step); install.sh may use only sh, tar and coreutils.
    expect(sh("tar", ["-xzf", n.tarball, "-C", tmp]).code).toBe(0);
    const unpacked = path.join(tmp, path.basename(n.tarball).replace(/\.tar\.gz$/, ""));
    const r = sh(`${bin}/sh`, [path.join(unpacked, "install.sh"), "--root", root], { env: { PATH: bin } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/systemd is not running here/);
    expect(fs.statSync(path.join(root, "var/lib/mesh-host")).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(path.join(root, "etc/systemd/system/mesh-host.service"), "utf8")).toContain("ExecStart=/usr/local/bin/mesh-host run");
    // installed, told no mesh yet: hosted
    const status = sh(path.join(root, "usr/local/bin/mesh-host"), ["status", "--json", "--state-dir", path.join(root, "var/lib/mesh-host"), "--root", root]);
    expect(JSON.parse(status.stdout).state).toBe("hosted");
    expect(fs.readFileSync(path.join(root, "etc/systemd/system/mesh-host.service"), "utf8")).toContain(
      "ExecStopPost=/usr/local/lib/mesh-host/mesh-host-rollback /var/lib/mesh-host /usr/local/bin/mesh-host",
    );
    expect(fs.statSync(path.join(root, "usr/local/lib/mesh-host/mesh-host-rollback")).mode & 0o777).toBe(0o755);
    await enrolAndApply(path.join(root, "usr/local/bin/mesh-host"), path.join(root, "var/lib/mesh-host"), root);
  });

  it("without systemd, the installed run loop restarts the host on every exit and stops it on SIGTERM, with only sh and coreutils", async () => {
    const bin = minimalPath();
    const root = path.join(tmp, "loop-root");
    fs.mkdirSync(path.join(root, "etc"), { recursive: true });
    const unpacked = path.join(tmp, "loop-unpacked");
    fs.mkdirSync(unpacked);
    expect(sh("tar", ["-xzf", n.tarball, "-C", unpacked, "--strip-components=1"]).code).toBe(0);
    const installed = sh(`${bin}/sh`, [path.join(unpacked, "install.sh"), "--root", root], { env: { PATH: bin } });
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("start the host with '/usr/local/lib/mesh-host/mesh-host-run-loop /usr/local/bin/mesh-host'");
    const loop = spawn(
      `${bin}/sh`,
      [path.join(root, "usr/local/lib/mesh-host/mesh-host-run-loop"), path.join(root, "usr/local/bin/mesh-host"), path.join(root, "var/lib/mesh-host")],
      {
        env: { PATH: bin, MESH_ROOT: root },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    loop.stdout!.on("data", (d) => (output += d));
    loop.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((r) => loop.once("exit", (code) => r(code)));
    const hostPid = () => {
      const r = sh("pgrep", ["-P", String(loop.pid)]);
      return r.stdout
        .split("\n")
        .map(Number)
        .find((pid) => pid > 0 && fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("run"));
    };
    try {
      const first = await waitFor("the host under the loop", hostPid, 10_000);
      process.kill(first, "SIGKILL");
      const second = await waitFor(
        "the host started again",
        () => {
          const p = hostPid();
          return p && p !== first ? p : null;
        },
        10_000,
      );
      expect(output).toMatch(/mesh-host exited with status 137; restarting in 2 s/);
      loop.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(fs.existsSync(`/proc/${second}`) && !/\) Z /.test(fs.readFileSync(`/proc/${second}/stat`, "utf8"))).toBe(false);
    } finally {
      if (loop.exitCode === null) loop.kill("SIGKILL");
    }
  });

  it("installs the .deb into a sandbox root; the unit verifies; lintian is clean; the host enrols and applies", async () => {
    const root = dpkgSandbox("deb-root");
    const r = dpkgInstall(root, n.deb);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.statSync(path.join(root, "var/lib/mesh-host")).mode & 0o777).toBe(0o700);
    expect(fs.readlinkSync(path.join(root, "etc/systemd/system/multi-user.target.wants/mesh-host.service"))).toBe("/lib/systemd/system/mesh-host.service");
    // verify the installed unit, pointed at the installed binary and rollback script (systemd checks they exist)
    const unit = fs
      .readFileSync(path.join(root, "lib/systemd/system/mesh-host.service"), "utf8")
      .replace("ExecStart=/usr/bin/mesh-host", `ExecStart=${path.join(root, "usr/bin/mesh-host")}`)
      .replace("ExecStopPost=/usr/lib/mesh-host/mesh-host-rollback", `ExecStopPost=${path.join(root, "usr/lib/mesh-host/mesh-host-rollback")}`);
    expect(unit).toContain(`ExecStopPost=${root}/usr/lib/mesh-host/mesh-host-rollback /var/lib/mesh-host /usr/bin/mesh-host`);
    fs.writeFileSync(path.join(tmp, "mesh-host.service"), unit);
    const verify = sh("systemd-analyze", ["verify", path.join(tmp, "mesh-host.service")]);
    expect(verify.stderr).toBe("");
    expect(verify.code).toBe(0);
    const lintian = sh("lintian", ["--tag-display-limit", "0", n.deb], { timeout: 300_000 });
    expect(lintian.stdout.trim()).toBe("");
    expect(lintian.code).toBe(0);
    fs.mkdirSync(path.join(root, "etc"), { recursive: true });
    await enrolAndApply(path.join(root, "usr/bin/mesh-host"), path.join(root, "var/lib/mesh-host"), root);
  }, 300_000);

  it("upgrades the .deb from N to N+1 keeping the state directory and the node's identity", async () => {
    const root = dpkgSandbox("deb-upgrade");
    expect(dpkgInstall(root, n.deb).code).toBe(0);
    const state = path.join(root, "var/lib/mesh-host");
    fs.mkdirSync(path.join(root, "etc"), { recursive: true });
    const bin = path.join(root, "usr/bin/mesh-host");
    const apply = sh(bin, ["apply", "--file", writeDeclaration(), "--state-dir", state, "--root", root]);
    expect(apply.code, apply.stderr).toBe(0);
    const before = fs.readFileSync(path.join(state, "store.json"), "utf8");
    const { token } = await api(cp.url).mutate("token.create", {});
    const enrol = sh(bin, ["enrol", cp.url, "--token", token, "--insecure", "--state-dir", state, "--root", root]);
    expect(enrol.code, enrol.stderr).toBe(0);
    const identity = fs.readFileSync(path.join(state, "identity.json"), "utf8");
    const key = fs.readFileSync(path.join(state, "node.key"), "utf8");
    const r = dpkgInstall(root, n1.deb);
    expect(r.code, r.stderr).toBe(0);
    expect(sh(bin, ["version"]).stdout.trim()).toBe(`${HOST_VERSION}.1`);
    expect(fs.readFileSync(path.join(state, "store.json"), "utf8")).toBe(before);
    // the node's identity survives the upgrade: same id, same key
    expect(fs.readFileSync(path.join(state, "identity.json"), "utf8")).toBe(identity);
    expect(fs.readFileSync(path.join(state, "node.key"), "utf8")).toBe(key);
    expect(JSON.parse(sh(bin, ["status", "--json", "--state-dir", state, "--root", root]).stdout).state).toBe("enrolled");
    expect(fs.statSync(state).mode & 0o777).toBe(0o700);
    // removing keeps the state; only purge deletes it
    expect(sh("dpkg", [`--root=${root}`, "--force-script-chrootless", "-r", "mesh-host"]).code).toBe(0);
    expect(fs.existsSync(path.join(state, "store.json"))).toBe(true);
    expect(sh("dpkg", [`--root=${root}`, "--force-script-chrootless", "-P", "mesh-host"]).code).toBe(0);
    expect(fs.existsSync(state)).toBe(false);
  });

  it("the single binary runs a service as its own supervisor (as where systemd is not PID 1), and stops it when it leaves the declaration", async () => {
    const dir = path.join(tmp, "sea-service");
    const root = path.join(dir, "root");
    fs.mkdirSync(path.join(root, "etc"), { recursive: true });
    const unit = "[Service]\nExecStart=/bin/sleep 1000\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n";
    const decl = (resources: unknown[]) => {
      const f = path.join(dir, `decl-${resources.length}.json`);
      fs.writeFileSync(f, JSON.stringify({ version: 1, resources }));
      return f;
    };
    const service = [
      { type: "directory", id: "units", path: "/etc/systemd", mode: "0755" },
      { type: "directory", id: "system", path: "/etc/systemd/system", mode: "0755", after: ["units"] },
      { type: "service", id: "sleeper", unit: "sleeper.service", content: unit, enabled: true, state: "running", after: ["system"] },
    ];
    const flags = ["--state-dir", path.join(dir, "state"), "--root", root];
    const env = { ...process.env, MESH_SERVICE_MANAGER: "mesh-host" };
    const up = sh(n.binary, ["apply", "--file", decl(service), ...flags], { env });
    expect(up.code, up.stderr).toBe(0);
    const status = JSON.parse(fs.readFileSync(path.join(root, "run/mesh-host/services/sleeper.service.json"), "utf8"));
    expect(status.state).toBe("active");
    // The supervisor is the single binary itself: nothing else is needed to run a service.
    expect(fs.readFileSync(`/proc/${status.supervisor.pid}/cmdline`, "utf8").split("\0").slice(0, 4)).toEqual([
      n.binary,
      "supervise",
      "--unit",
      "sleeper.service",
    ]);
    const down = sh(n.binary, ["apply", "--file", decl([]), ...flags], { env });
    expect(down.code, down.stderr).toBe(0);
    // Gone, or a zombie waiting for whatever PID 1 is here to reap it.
    const running = (pid: number) => fs.existsSync(`/proc/${pid}`) && !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
    expect(running(status.main.pid)).toBe(false);
    expect(running(status.supervisor.pid)).toBe(false);
  });

  it("the single binary upgrades itself from a signed release, keeps N as .prev, and the unit's rollback step puts N back", async () => {
    const dir = path.join(tmp, "sea-upgrade");
    const bin = path.join(dir, "bin", "mesh-host");
    const state = path.join(dir, "state");
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    fs.mkdirSync(path.join(dir, "root"), { recursive: true });
    fs.copyFileSync(n.binary, bin);
    fs.chmodSync(bin, 0o755);
    const bytes = fs.readFileSync(n1.binary);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const key = createPrivateKey(fs.readFileSync(path.join(REPO, "infra/release/TEST-ONLY-release-private-key.pem")));
    const server = http.createServer((_req, res) => res.end(bytes));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mesh-host`;
      const resource = {
        type: "host",
        id: "mesh-host",
        version: n1.version,
        sha256,
        source: { url, sha256 },
        signature: sign(null, Buffer.from(hostReleaseMessage(n1.version, sha256)), key).toString("base64"),
      };
      const decl = path.join(dir, "decl.json");
      fs.writeFileSync(decl, JSON.stringify({ version: 1, resources: [resource] }));
      // Run asynchronously: the test's own server must keep answering while the binary downloads.
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(bin, ["apply", "--file", decl, "--state-dir", state, "--root", path.join(dir, "root")], { timeout: 120_000 }, (err, _out, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
        );
      });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      server.close();
    }
    expect(sh(bin, ["version"]).stdout.trim()).toBe(n1.version);
    expect(sh(`${bin}.prev`, ["version"]).stdout.trim()).toBe(HOST_VERSION);
    expect(JSON.parse(fs.readFileSync(path.join(state, "upgrade.json"), "utf8"))).toMatchObject({ from: HOST_VERSION, to: n1.version, binary: bin });
    // What ExecStopPost does: the first exit is the old binary's; a second one before the new binary reached a control plane rolls back.
    const script = path.join(REPO, "infra/package/mesh-host-rollback.sh");
    expect(sh("sh", [script, state, bin]).code).toBe(0);
    expect(sh(bin, ["version"]).stdout.trim()).toBe(n1.version);
    expect(sh("sh", [script, state, bin]).code).toBe(0);
    expect(sh(bin, ["version"]).stdout.trim()).toBe(HOST_VERSION);
    expect(fs.existsSync(path.join(state, "upgrade.json"))).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(state, "upgrade-failed.json"), "utf8")).to).toBe(n1.version);
  }, 180_000);

  function writeDeclaration(): string {
    const f = path.join(tmp, "decl.json");
    fs.writeFileSync(f, JSON.stringify({ version: 1, resources: [{ type: "file", id: "x", path: "/etc/x.conf", content: "x\n" }] }));
    return f;
  }

  async function enrolAndApply(bin: string, stateDir: string, root: string) {
    const { token } = await api(cp.url).mutate("token.create", { labels: { pkg: "yes" } });
    const flags = ["--state-dir", stateDir, "--root", root, "--interval", "1"];
    const enrol = sh(bin, ["enrol", cp.url, "--token", token, "--insecure", ...flags]);
    expect(enrol.code, enrol.stderr).toBe(0);
    const child = (await import("node:child_process")).spawn(bin, ["run", ...flags], { stdio: "ignore" });
    try {
      await waitFor("declared file applied by the installed binary", () => fs.existsSync(path.join(root, "etc/hello.conf")), 30_000);
      expect(fs.readFileSync(path.join(root, "etc/hello.conf"), "utf8")).toBe("from the installed binary\n");
    } finally {
      child.kill("SIGTERM");
    }
  }
});
