// A .deb-installed host upgrades through a `package` resource naming itself (decision 0007):
// real dpkg in a sandbox root, apt from the signed repository of the very control plane the host
// is enrolled with (its /apt, the .debs in its data directory's apt/pool, the sandbox's sources line
// naming the key downloaded from /apt/mesh.gpg with signed-by=), the installed run loop as the
// supervisor, and fake `systemctl`/`deb-systemd-invoke`/`deb-systemd-helper` on PATH that record every call.
// The package never asks the service manager to restart the host; the host notices its binary
// was replaced, reports and exits 0, and the run loop starts N+1. A broken N+2 comes back to N+1
// through the installation's rollback step, with dpkg's record put back and the failure reported.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { startAptRepository, type AptRepositoryServer } from "../harness/apt-repository";
import { buildArtifacts, type Artifacts } from "../harness/packaging";
import { waitFor } from "../harness/wait";

const N = "8.0.0";
const N1 = "8.0.1";
const BROKEN = "8.0.2";
const TRIAL_MS = 15_000;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-pkg-upgrade-"));
const sh = (cmd: string, args: string[], opts: Parameters<typeof spawnSync>[2] = {}) => {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 300_000, ...opts });
  return { code: r.status, stdout: String(r.stdout ?? ""), stderr: String(r.stderr ?? "") };
};

/** Fake service-manager programs: each call is one line in `log`, and nothing else happens. */
function recordingServiceManager(log: string): string {
  const dir = path.join(tmp, "fake-bin");
  fs.mkdirSync(dir, { recursive: true });
  for (const prog of ["systemctl", "deb-systemd-invoke", "deb-systemd-helper", "service", "invoke-rc.d"]) {
    fs.writeFileSync(path.join(dir, prog), `#!/bin/sh\necho "${prog} $*" >> "${log}"\nexit 0\n`, { mode: 0o755 });
  }
  return dir;
}

/** A .deb like `deb` but of `version`, whose binary exits at once (a release that cannot start); named as the repository's pool wants. */
function brokenDeb(deb: string, version: string): string {
  const dir = path.join(tmp, `broken-${version}`);
  expect(sh("dpkg-deb", ["-R", deb, dir]).code).toBe(0);
  fs.writeFileSync(path.join(dir, "usr/bin/mesh-host"), '#!/bin/sh\necho "broken build: exits at once" >&2\nexit 1\n', { mode: 0o755 });
  const control = fs.readFileSync(path.join(dir, "DEBIAN/control"), "utf8").replace(/^Version: .*$/m, `Version: ${version}`);
  fs.writeFileSync(path.join(dir, "DEBIAN/control"), control);
  // The md5sums must describe the files, or `dpkg -V` would blame the repack.
  const md5 = sh("sh", ["-c", "find usr lib -type f -print0 | sort -z | xargs -0 md5sum"], { cwd: dir });
  fs.writeFileSync(path.join(dir, "DEBIAN/md5sums"), md5.stdout);
  const out = path.join(tmp, "broken", `mesh-host_${version}_${sh("dpkg", ["--print-architecture"]).stdout.trim()}.deb`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const built = sh("dpkg-deb", ["--root-owner-group", "-Zgzip", "--build", dir, out]);
  expect(built.code, built.stderr).toBe(0);
  return out;
}

/** A dpkg database in `root` that knows the libraries mesh-host depends on (installed for real outside it). */
function dpkgSandbox(root: string): void {
  for (const d of [
    "var/lib/dpkg/info",
    "var/lib/dpkg/updates",
    "var/log",
    "etc/apt/sources.list.d",
    "etc/apt/apt.conf.d",
    "etc/apt/preferences.d",
    "var/lib/apt/lists/partial",
    "var/cache/apt/archives/partial",
  ]) {
    fs.mkdirSync(path.join(root, d), { recursive: true });
  }
  const arch = sh("dpkg", ["--print-architecture"]).stdout.trim();
  const stubs = ["libc6", "libgcc-s1", "libstdc++6"].map((name) => {
    const version = sh("dpkg-query", ["-W", "-f=${Version}", name]).stdout.trim() || "99";
    return `Package: ${name}\nStatus: install ok installed\nPriority: optional\nSection: libs\nMaintainer: stub <stub@mesh.invalid>\nArchitecture: ${arch}\nVersion: ${version}\nDescription: stands for the machine's own ${name}\n`;
  });
  fs.writeFileSync(path.join(root, "var/lib/dpkg/status"), stubs.join("\n"));
  // Their (empty) file lists and md5sums, or `dpkg --audit` would ask for them to be reinstalled.
  for (const name of ["libc6", "libgcc-s1", "libstdc++6"])
    for (const ext of ["list", "md5sums"]) fs.writeFileSync(path.join(root, `var/lib/dpkg/info/${name}.${ext}`), "");
}

describe("the host's own package", () => {
  let repo: AptRepositoryServer;
  let cp: ControlPlane;
  let n: Artifacts;
  let n1: Artifacts;
  let broken: string;
  let loop: ChildProcess | null = null;
  let loopOutput = "";
  const root = path.join(tmp, "root");
  const state = path.join(root, "var/lib/mesh-host");
  const bin = path.join(root, "usr/bin/mesh-host");
  const calls = path.join(tmp, "service-manager-calls.log");
  let nodeId = "";
  const client = () => api(cp.url);
  const dpkg = (...args: string[]) => sh("dpkg", [`--root=${root}`, ...args]);
  const node = () => client().query("node.get", { id: nodeId });
  const declare = (version: string) =>
    client().mutate("role.upsert", {
      name: "host-package",
      selector: { labels: { install: "deb" } },
      resources: [{ type: "package", id: "mesh-host", name: "mesh-host", version }],
    });

  /** The installed run loop as the supervisor (what Restart=always and ExecStopPost do under systemd). */
  async function startLoop(env: Record<string, string> = {}): Promise<void> {
    const fakeBin = recordingServiceManager(calls);
    loop = spawn("sh", [path.join(root, "usr/lib/mesh-host/mesh-host-run-loop"), bin, state], {
      env: {
        ...process.env,
        PATH: `${fakeBin}:${process.env.PATH}`,
        MESH_ROOT: root,
        MESH_DPKG_SCRIPTS_CHROOTLESS: "1",
        MESH_UPGRADE_TRIAL_MS: String(TRIAL_MS),
        MESH_LOG_LEVEL: "info",
        MESH_LINK_TIMEOUT_MS: "5000",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    loop.stdout!.on("data", (d) => (loopOutput += d));
    loop.stderr!.on("data", (d) => (loopOutput += d));
  }

  async function stopLoop(): Promise<void> {
    const running = loop;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((r) => running.once("exit", r));
    running.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (running.exitCode === null) running.kill("SIGKILL");
  }

  beforeAll(async () => {
    n = buildArtifacts(N, path.join(tmp, "n"));
    n1 = buildArtifacts(N1, path.join(tmp, "n1"));
    broken = brokenDeb(n1.deb, BROKEN);
    // The control plane the host enrols with serves every version from its signed /apt (the .debs
    // copied into its data directory's apt/pool, as an operator adds a release).
    repo = await startAptRepository({ debs: [n.deb, n1.deb, broken], engine: engines()[0]! });
    cp = repo.cp;

    dpkgSandbox(root);
    // As the Add machines page says: the key from /apt/mesh.gpg in a keyring, a sources line naming it (no [trusted=yes]).
    const keyring = path.join(root, "usr/share/keyrings/mesh.gpg");
    fs.mkdirSync(path.dirname(keyring), { recursive: true });
    fs.writeFileSync(keyring, Buffer.from(await (await fetch(`${repo.url}/mesh.gpg`)).arrayBuffer()));
    fs.writeFileSync(path.join(root, "etc/apt/sources.list.d/mesh.list"), `deb [signed-by=${keyring}] ${repo.url} stable main\n`);
    const installed = dpkg("--force-script-chrootless", `--log=${root}/var/log/dpkg.log`, "-i", n.deb);
    expect(installed.code, installed.stderr).toBe(0);

    const { token } = await client().mutate("token.create", { labels: { install: "deb" } });
    const enrol = sh(bin, ["enrol", cp.url, "--token", token, "--insecure", "--state-dir", state, "--root", root]);
    expect(enrol.code, enrol.stderr).toBe(0);
    nodeId = JSON.parse(fs.readFileSync(path.join(state, "identity.json"), "utf8")).nodeId;

    await startLoop();
    await waitFor("the host on N", async () => (await node()).hostVersion === N, 60_000);
  }, 900_000);

  afterAll(async () => {
    if (process.env.MESH_TEST_LOOP_LOG) fs.writeFileSync(process.env.MESH_TEST_LOOP_LOG, loopOutput);
    await stopLoop();
    await repo?.dispose();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("upgrades N to N+1 through apt; nothing asks the service manager to restart it; the host exits 0 after reporting and the run loop starts N+1", async () => {
    const changedAt = Date.now();
    await declare(N1);
    await waitFor(
      "the host reporting N+1 with the package applied",
      async () => {
        const x = await node();
        return x.hostVersion === N1 && x.errors.length === 0 && x.appliedVersion === x.declaredVersion && x.owned.some((o: any) => o.id === "mesh-host");
      },
      180_000,
    );
    console.log(`role change to the host reporting ${N1} through its package: ${((Date.now() - changedAt) / 1000).toFixed(1)} s`);
    const recorded = fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").split("\n").filter(Boolean) : [];
    expect(recorded.filter((l) => l.includes("mesh-host.service") && !l.includes("daemon-reload"))).toEqual([]);
    // N noticed its binary was replaced, reported, and left with 0; the loop started N+1 (whose trial passed).
    expect(loopOutput).toMatch(/host binary replaced on disk; exiting after this report/);
    expect(loopOutput).toMatch(/mesh-host exited with status 0; restarting/);
    // The control plane acknowledged that report, and N knew it (the ack may come while it looks at the new binary).
    expect(loopOutput).not.toMatch(/no ack for the report after the upgrade/);
    // The trial ends when the link is accepted, which may be told after the first report.
    await waitFor("N+1 keeping its upgrade", () => /upgrade kept: the control plane was reached/.test(loopOutput), 30_000);
    expect(sh(bin, ["version"]).stdout.trim()).toBe(N1);
    expect(sh("dpkg-query", [`--admindir=${root}/var/lib/dpkg`, "-W", "-f=${Status} ${Version}", "mesh-host"]).stdout).toBe(`install ok installed ${N1}`);
    // apt took it from the control plane's /apt, whose InRelease it verified with the key (it keeps no unverified one).
    const lists = fs.readdirSync(path.join(root, "var/lib/apt/lists"));
    const site = new URL(repo.url);
    expect(lists).toContain(`${site.hostname}:${site.port}${site.pathname.replaceAll("/", "_")}_dists_stable_InRelease`);
    const verify = dpkg("-V", "mesh-host");
    expect(verify.stdout + verify.stderr).toBe("");
    expect(verify.code).toBe(0);
    expect(dpkg("--audit").stdout).toBe("");
    expect(fs.existsSync(path.join(state, "upgrade.json"))).toBe(false);
  }, 240_000);

  it("a broken N+2 (its binary exits at once), the host SIGKILLed after dpkg put it in place and before it reported, ends back on N+1 through the rollback step, dpkg's record put back, the failure reported", async () => {
    // From here on the host kills itself right after dpkg replaced its binary: the breadcrumb
    // written before dpkg ran is all the rollback step and the next start have to go on.
    await stopLoop();
    await startLoop({ MESH_FAILPOINT: "host-package-installed" });
    const since = loopOutput.length;
    await declare(BROKEN);
    await waitFor(
      "the host back on N+1, reporting the failed upgrade",
      async () => {
        const x = await node();
        return x.hostVersion === N1 && x.errors.some((e: any) => e.id === "mesh-host" && /upgrade to mesh-host 8\.0\.2 failed/.test(e.message));
      },
      240_000,
    );
    const error = (await node()).errors.find((e: any) => e.id === "mesh-host");
    expect(error.message).toMatch(/rolled back to 8\.0\.1: the new binary exited before it reached the control plane.*not tried again/);
    expect(loopOutput).toMatch(/broken build: exits at once/);
    // Killed, not leaving after its report: the breadcrumb from before dpkg is what put N+2 on trial.
    expect(loopOutput.slice(since)).toMatch(/mesh-host exited with status 137/);
    expect(loopOutput.slice(since)).not.toMatch(/host binary replaced on disk; exiting after this report/);
    // N+1 put dpkg's record back: with apt from the control plane's repository, or the .deb apt kept when it fetched it from there.
    expect(loopOutput).toMatch(/mesh-host restored to 8\.0\.1 (with apt-get|from \S+\/var\/cache\/apt\/archives\/mesh-host_8\.0\.1_)/);
    expect(sh(bin, ["version"]).stdout.trim()).toBe(N1);
    expect(sh("dpkg-query", [`--admindir=${root}/var/lib/dpkg`, "-W", "-f=${Status} ${Version}", "mesh-host"]).stdout).toBe(`install ok installed ${N1}`);
    const verify = dpkg("-V", "mesh-host");
    expect(verify.stdout + verify.stderr).toBe("");
    expect(dpkg("--audit").stdout).toBe("");
    const recorded = fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").split("\n").filter(Boolean) : [];
    expect(recorded.filter((l) => l.includes("mesh-host.service") && !l.includes("daemon-reload"))).toEqual([]);
  }, 300_000);

  it("the host SIGKILLed after dpkg put N in place (a declared downgrade) and before it reported: N starts on trial and keeps it once linked", async () => {
    const since = loopOutput.length;
    await declare(N);
    await waitFor(
      "the host reporting N with the package applied",
      async () => {
        const x = await node();
        return x.hostVersion === N && x.errors.length === 0 && x.appliedVersion === x.declaredVersion;
      },
      180_000,
    );
    const after = () => loopOutput.slice(since);
    expect(after()).toMatch(/mesh-host exited with status 137/);
    expect(after()).not.toMatch(/host binary replaced on disk; exiting after this report/);
    await waitFor("N keeping its upgrade", () => /upgrade kept: the control plane was reached/.test(after()), 30_000);
    expect(after()).toMatch(/upgraded: on trial until the control plane is reached/);
    expect(sh(bin, ["version"]).stdout.trim()).toBe(N);
    expect(sh("dpkg-query", [`--admindir=${root}/var/lib/dpkg`, "-W", "-f=${Status} ${Version}", "mesh-host"]).stdout).toBe(`install ok installed ${N}`);
    const verify = dpkg("-V", "mesh-host");
    expect(verify.stdout + verify.stderr).toBe("");
    expect(dpkg("--audit").stdout).toBe("");
    expect(fs.existsSync(path.join(state, "upgrade.json"))).toBe(false);
    expect(fs.existsSync(path.join(state, "upgrade-failed.json"))).toBe(false);
  }, 240_000);

  it("the maintainer scripts, with systemd running, only reload units on upgrade; install starts and remove stops", () => {
    // The shipped scripts, run for real in a private mount namespace where /run/systemd/system
    // exists (systemd "running") and /var/lib is a scratch tmpfs, with the recording fakes on PATH.
    const scripts = path.join(tmp, "control");
    expect(sh("dpkg-deb", ["-e", n1.deb, scripts]).code).toBe(0);
    const log = path.join(tmp, "scripts-calls.log");
    const fakeBin = recordingServiceManager(log);
    const run = (sequence: string[][]) => {
      fs.writeFileSync(log, "");
      const steps = sequence.map(([script, ...args]) => `"${scripts}/${script}" ${args.join(" ")} || exit $?`).join("\n");
      const r = sh(
        "unshare",
        [
          "-m",
          "--propagation",
          "private",
          "sh",
          "-c",
          `set -e\nmount -t tmpfs none /run\nmkdir -p /run/systemd/system\nmount -t tmpfs none /var/lib\nunset DPKG_ROOT\n${steps}`,
        ],
        {
          env: { ...process.env, PATH: `${fakeBin}:${process.env.PATH}` },
        },
      );
      expect(r.code, r.stderr).toBe(0);
      return fs.readFileSync(log, "utf8").split("\n").filter(Boolean);
    };
    // dpkg's order on upgrade: old prerm upgrade, new postrm... (old postrm upgrade), new postinst configure OLD.
    const upgrade = run([
      ["prerm", "upgrade", N1],
      ["postrm", "upgrade", N1],
      ["postinst", "configure", N],
    ]);
    expect(upgrade).toEqual(["systemctl --system daemon-reload"]);
    const install = run([["postinst", "configure"]]);
    expect(install).toEqual(["systemctl --system daemon-reload", "deb-systemd-helper enable mesh-host.service", "deb-systemd-invoke start mesh-host.service"]);
    const remove = run([
      ["prerm", "remove"],
      ["postrm", "remove"],
    ]);
    expect(remove).toEqual(["deb-systemd-invoke stop mesh-host.service", "systemctl --system daemon-reload"]);
  });
});
