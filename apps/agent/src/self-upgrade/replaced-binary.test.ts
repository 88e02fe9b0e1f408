// The host notices when a package replaced the binary it runs from: it puts the new one on
// trial (breadcrumb naming the package and the version to go back to, BINARY.prev kept), and a
// package version rolled back before is refused; after a rollback, dpkg's record is put back.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../log";
import { RecordingRunner } from "../runner/recording-runner";
import { MemoryStore } from "../store/memory-store";
import { ManualClock } from "../manual-clock";
import { binaryIdentity } from "./binary-watch";
import { settleRolledBackPackage } from "./host-package";
import { SelfUpgrade, type SelfUpgradeOptions } from "./self-upgrade";
import { BREADCRUMB_KEY, Breadcrumb, EXITED_KEY, FAILED_KEY, FailedUpgrade } from "./upgrade-files";
import { UpgradeTrial } from "./upgrade-trial";
import { tempDirs } from "../testing/temp-dirs";

const freshDir = tempDirs("mesh-replaced-");
let dir: string;
let binary: string;
let store: MemoryStore;
beforeEach(() => {
  dir = freshDir();
  binary = join(dir, "mesh-host");
  writeFileSync(binary, "binary 1.0.0\n", { mode: 0o755 });
  store = new MemoryStore();
});

/** dpkg-query answering, the first time, that mesh-host is installed at `before` (what an upgrade reads before dpkg runs), then at `version`. */
const dpkgSays = (version: string, before = "1.0.0") =>
  new RecordingRunner([
    { match: ["dpkg-query"], result: { stdout: `install ok installed\t${before}\n` } },
    { match: ["dpkg-query"], result: { stdout: `install ok installed\t${version}\n` }, repeat: true },
  ]);

/** The self-upgrade of a host running 1.0.0 from `binary` (as started), dpkg answered by `runner`; `more` for the rest. */
async function host(runner: RecordingRunner, more: Partial<SelfUpgradeOptions> = {}) {
  return new SelfUpgrade({
    store,
    binary,
    running: "1.0.0",
    trialMs: 60_000,
    publicKey: null,
    log: silentLogger(),
    startedAs: await binaryIdentity(binary),
    packages: { runner, root: dir },
    ...more,
  });
}

/** What dpkg does: unpack beside, rename over the path. */
function installOver(body: string) {
  writeFileSync(`${binary}.dpkg-new`, body, { mode: 0o755 });
  renameSync(`${binary}.dpkg-new`, binary);
}

describe("a binary replaced on disk", () => {
  it("is not reported while the binary is the one the host started from", async () => {
    const up = await host(dpkgSays("1.0.0"));
    expect(await up.replacedOnDisk()).toBe(false);
    expect(await store.read(BREADCRUMB_KEY)).toBeNull();
  });

  it("by the host's own package: the new version goes on trial, naming the package version to go back to, with the old binary kept as .prev", async () => {
    const up = await host(dpkgSays("1.1.0"));
    const started = statSync(binary).ino;
    await up.beforeHostPackage("1.1.0");
    installOver("binary 1.1.0\n");
    expect(await up.replacedOnDisk()).toBe(true);
    const crumb = Breadcrumb.parse(JSON.parse(String(await store.read(BREADCRUMB_KEY))));
    expect(crumb).toMatchObject({ from: "1.0.0", to: "1.1.0", binary, package: { name: "mesh-host", previous: "1.0.0" } });
    expect(crumb.sha256).toBe(createHash("sha256").update("binary 1.1.0\n").digest("hex"));
    expect(statSync(`${binary}.prev`).ino).toBe(started);
    expect(readFileSync(`${binary}.prev`, "utf8")).toBe("binary 1.0.0\n");
    expect(up.staged).toEqual({ from: "1.0.0", to: "1.1.0" });
    // Asked again (the next report), still leaving: no second breadcrumb, no second check.
    expect(await up.replacedOnDisk()).toBe(true);
  });

  it("by the host's own package: the version to go back to is dpkg's exact one, read before dpkg ran, and kept when the new binary is put on trial", async () => {
    const runner = dpkgSays("1:1.1.0-1", "1:1.0.0-3");
    const up = await host(runner);
    await up.beforeHostPackage("1:1.1.0-1");
    expect(runner.argvs[0]).toEqual(["dpkg-query", `--admindir=${join(dir, "var/lib/dpkg")}`, "-W", "--showformat=${Status}\\t${Version}\\n", "mesh-host"]);
    expect(Breadcrumb.parse(JSON.parse(String(await store.read(BREADCRUMB_KEY)))).package).toEqual({ name: "mesh-host", previous: "1:1.0.0-3" });
    installOver("binary 1.1.0\n");
    expect(await up.replacedOnDisk()).toBe(true);
    const crumb = Breadcrumb.parse(JSON.parse(String(await store.read(BREADCRUMB_KEY))));
    expect(crumb).toMatchObject({ from: "1.0.0", to: "1:1.1.0-1", package: { name: "mesh-host", previous: "1:1.0.0-3" } });
  });

  it("by the host's own package on a host where dpkg knows only a removed mesh-host (config-files): the version to go back to is the running one", async () => {
    const runner = new RecordingRunner([
      { match: ["dpkg-query"], result: { stdout: "deinstall ok config-files\t0.9.0-1\n" } },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" }, repeat: true },
    ]);
    const up = await host(runner);
    await up.beforeHostPackage("1.1.0");
    expect(Breadcrumb.parse(JSON.parse(String(await store.read(BREADCRUMB_KEY)))).package).toEqual({ name: "mesh-host", previous: "1.0.0" });
  });

  it("by a reinstall of the same version: the host leaves, with nothing on trial", async () => {
    const up = await host(dpkgSays("1.0.0"));
    installOver("binary 1.0.0, rebuilt\n");
    // Not run as the single executable here, so the binary's own word is not asked: dpkg says 1.0.0, which is running.
    expect(await up.replacedOnDisk()).toBe(true);
    expect(await store.read(BREADCRUMB_KEY)).toBeNull();
  });

  it("while dpkg's record is put back in the background, the binary its reinstall leaves is the one started as", async () => {
    let settled!: (identity: Awaited<ReturnType<typeof binaryIdentity>>) => void;
    const settling = new Promise<Awaited<ReturnType<typeof binaryIdentity>>>((resolve) => (settled = resolve));
    const up = await host(dpkgSays("1.0.0"), { settling });
    installOver("binary 1.0.0, reinstalled\n");
    expect(await up.replacedOnDisk()).toBe(false);
    settled(await binaryIdentity(binary));
    expect(await up.replacedOnDisk()).toBe(false);
    // A package put in place after that is one.
    installOver("binary 1.1.0\n");
    expect(await up.replacedOnDisk()).toBe(true);
  });

  it("a new binary whose trial failed does not take the previous one its rollback put back for a replacement", async () => {
    // 1.1.0 runs on trial (its breadcrumb, the old binary as .prev); it reconciles offline while the trial runs out.
    writeFileSync(`${binary}.prev`, "binary 1.0.0\n", { mode: 0o755 });
    writeFileSync(binary, "binary 1.1.0\n", { mode: 0o755 });
    await store.write(
      BREADCRUMB_KEY,
      JSON.stringify({ from: "1.0.0", to: "1.1.0", sha256: "a".repeat(64), binary, deadline: new Date().toISOString(), trialMs: 60_000 }),
    );
    const trial = (await UpgradeTrial.begin(store, "1.1.0", silentLogger()))!;
    trial.stop();
    const up = await host(dpkgSays("1.0.0"), { running: "1.1.0", trial });
    await trial.rollBack("did not reach the control plane");
    expect(readFileSync(binary, "utf8")).toBe("binary 1.0.0\n");
    // The reconcile that ends after the rollback: no new trial of 1.0.0 (which would clear the failure when it links).
    expect(await up.replacedOnDisk()).toBe(false);
    expect(await store.read(BREADCRUMB_KEY)).toBeNull();
    expect(FailedUpgrade.parse(JSON.parse(String(await store.read(FAILED_KEY)))).to).toBe("1.1.0");
  });

  it("refuses a package version that was rolled back before, and leaves the binary alone", async () => {
    await store.write(
      FAILED_KEY,
      JSON.stringify({
        from: "1.0.0",
        to: "1.1.0",
        sha256: "a".repeat(64),
        binary,
        deadline: new Date().toISOString(),
        trialMs: 1000,
        package: { name: "mesh-host", previous: "1.0.0" },
      }),
    );
    const up = await host(dpkgSays("1.0.0"));
    await expect(up.beforeHostPackage("1.1.0")).rejects.toThrow(
      /upgrade to mesh-host 1\.1\.0 failed and was rolled back to 1\.0\.0: the new binary exited before it reached the control plane.*not tried again/,
    );
    expect(existsSync(`${binary}.prev`)).toBe(false);
    // The same release with a Debian epoch and revision is the same release.
    await expect(up.beforeHostPackage("1:1.1.0-1")).rejects.toThrow(/upgrade to mesh-host 1\.1\.0 failed/);
    // Another version is tried afresh.
    await up.beforeHostPackage("1.2.0");
    expect(existsSync(`${binary}.prev`)).toBe(true);
  });
});

describe("the breadcrumb of the host's own package, written before dpkg runs", () => {
  const crumbNow = async () => {
    const raw = await store.read(BREADCRUMB_KEY);
    return raw ? Breadcrumb.parse(JSON.parse(String(raw))) : null;
  };

  it("is durable before dpkg replaces the binary, naming the declared version and the package to go back to", async () => {
    await store.write(EXITED_KEY, "");
    const up = await host(dpkgSays("1.0.0"));
    await up.beforeHostPackage("1.1.0");
    expect(await crumbNow()).toMatchObject({ from: "1.0.0", to: "1.1.0", binary, package: { name: "mesh-host", previous: "1.0.0" } });
    expect((await crumbNow())?.sha256).toBeUndefined();
    // A stale marker would make this binary's own exit count as the new one's.
    expect(await store.read(EXITED_KEY)).toBeNull();
  });

  it("names a package marker when no version is declared, and takes a Debian version with epoch and revision", async () => {
    const up = await host(dpkgSays("1.0.0"));
    await up.beforeHostPackage(undefined);
    expect((await crumbNow())?.to).toBe("package");
    await up.afterHostPackage();
    await up.beforeHostPackage("1:1.1.0-2");
    expect((await crumbNow())?.to).toBe("1:1.1.0-2");
  });

  it("is taken back when the apply left the binary as it was (apt failed before dpkg replaced it)", async () => {
    const up = await host(dpkgSays("1.0.0"));
    await up.beforeHostPackage("1.1.0");
    await up.afterHostPackage();
    expect(await crumbNow()).toBeNull();
  });

  it("stays when the binary was replaced, and is completed after the report", async () => {
    const up = await host(dpkgSays("1.1.0"));
    await up.beforeHostPackage("1.1.0");
    installOver("binary 1.1.0\n");
    await up.afterHostPackage();
    expect((await crumbNow())?.to).toBe("1.1.0");
    expect(await up.replacedOnDisk()).toBe(true);
    expect((await crumbNow())?.sha256).toBe(createHash("sha256").update("binary 1.1.0\n").digest("hex"));
  });

  it("goes when dpkg put the same version back: nothing is on trial", async () => {
    const up = await host(dpkgSays("1.0.0"));
    await up.beforeHostPackage("1.0.0");
    installOver("binary 1.0.0, rebuilt\n");
    await up.afterHostPackage();
    expect(await up.replacedOnDisk()).toBe(true);
    expect(await crumbNow()).toBeNull();
  });

  describe("a host killed after dpkg replaced its binary, before it reported", () => {
    async function killedAfterDpkg(declared: string | undefined) {
      const up = await host(dpkgSays("1.1.0"));
      await up.beforeHostPackage(declared);
      installOver("binary 1.1.0\n");
      // SIGKILL here: no afterHostPackage, no report, no replacedOnDisk. The rollback step sees the first exit.
      await store.write(EXITED_KEY, "");
    }

    it("puts the new version on trial at the next start, which keeps it once the control plane is reached", async () => {
      await killedAfterDpkg("1.1.0");
      const trial = await UpgradeTrial.begin(store, "1.1.0", silentLogger());
      expect(trial).not.toBeNull();
      await trial!.commit();
      expect(await crumbNow()).toBeNull();
      expect(await store.read(EXITED_KEY)).toBeNull();
      expect(readFileSync(binary, "utf8")).toBe("binary 1.1.0\n");
    });

    it("rolls back to the kept .prev when the new version does not reach it, recording the package to reinstall", async () => {
      await killedAfterDpkg(undefined);
      const trial = await UpgradeTrial.begin(store, "1.1.0", silentLogger());
      expect(trial).not.toBeNull();
      // Not yet known when dpkg ran: the version on trial is the one that started.
      expect((await crumbNow())?.to).toBe("1.1.0");
      await trial!.rollBack("did not reach the control plane");
      expect(readFileSync(binary, "utf8")).toBe("binary 1.0.0\n");
      const failed = FailedUpgrade.parse(JSON.parse(String(await store.read(FAILED_KEY))));
      expect(failed).toMatchObject({
        from: "1.0.0",
        to: "1.1.0",
        package: { name: "mesh-host", previous: "1.0.0" },
        reason: "did not reach the control plane",
      });
      expect(await crumbNow()).toBeNull();
      // The old binary, started again, refuses the same package version.
      const again = await host(dpkgSays("1.1.0"));
      await expect(again.beforeHostPackage("1.1.0")).rejects.toThrow(/upgrade to mesh-host 1\.1\.0 failed .*not tried again/);
    });

    it("replaced again while on trial (an operator's apt upgrade): the trial is disarmed, never rolling back over the newer binary", async () => {
      await killedAfterDpkg("1.1.0");
      const clock = new ManualClock();
      const trial = (await UpgradeTrial.begin(store, "1.1.0", silentLogger(), clock))!;
      const up = await host(dpkgSays("1.2.0", "1.2.0"), { running: "1.1.0", trial, clock });
      installOver("binary 1.2.0\n");
      expect(await up.replacedOnDisk()).toBe(true);
      expect(trial.active).toBe(false);
      clock.advance(10 * 60_000);
      await new Promise((r) => setImmediate(r));
      expect(readFileSync(binary, "utf8")).toBe("binary 1.2.0\n");
      expect(await crumbNow()).toMatchObject({ from: "1.1.0", to: "1.2.0" });
      expect(await store.read(FAILED_KEY)).toBeNull();
    });

    it("puts nothing on trial when the old binary starts again (killed before dpkg replaced it)", async () => {
      const up = await host(dpkgSays("1.0.0"));
      await up.beforeHostPackage("1.1.0");
      await store.write(EXITED_KEY, "");
      expect(await UpgradeTrial.begin(store, "1.0.0", silentLogger())).toBeNull();
      expect(await crumbNow()).toBeNull();
      expect(await store.read(EXITED_KEY)).toBeNull();
    });
  });
});

describe("after a rolled-back package upgrade", () => {
  const failed = {
    from: "1.0.0",
    to: "1.1.0",
    sha256: "a".repeat(64),
    deadline: new Date().toISOString(),
    trialMs: 1000,
    package: { name: "mesh-host", previous: "1.0.0" },
  };

  it("reinstalls the running version with apt, so dpkg's record is true again", async () => {
    await store.write(FAILED_KEY, JSON.stringify({ ...failed, binary }));
    const runner = new RecordingRunner([
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" } },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" } },
      { match: (argv) => argv[0] === "apt-get" && argv.includes("install"), result: {} },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.0.0\n" } },
    ]);
    await settleRolledBackPackage(store, { runner, root: "/" }, "1.0.0", silentLogger());
    const apt = runner.argvs.find((a) => a[0] === "apt-get")!;
    expect(apt).toContain("mesh-host=1.0.0");
    expect(apt).toContain("--allow-downgrades");
    expect(JSON.parse(String(await store.read(FAILED_KEY))).note).toBeUndefined();
  });

  it("leaves dpkg alone when the binary running is not the one the rollback put back (a later version, or the failed one after a crash)", async () => {
    await store.write(FAILED_KEY, JSON.stringify({ ...failed, to: "2.0.0-1", binary, package: { name: "mesh-host", previous: "1.0.0-3" } }));
    for (const running of ["2.0.1", "2.0.0"]) {
      const runner = new RecordingRunner([{ match: ["dpkg-query"], result: { stdout: `install ok installed\t${running}-1\n` } }]);
      expect(await settleRolledBackPackage(store, { runner, root: "/" }, running, silentLogger())).toBe("nothing");
      expect(runner.argvs.filter((a) => a[0] === "apt-get" || a[0] === "dpkg")).toEqual([]);
    }
    expect(JSON.parse(String(await store.read(FAILED_KEY))).note).toBeUndefined();
  });

  it("reinstalls dpkg's exact previous version, as the breadcrumb recorded it, not one rebuilt from the running host's", async () => {
    await store.write(FAILED_KEY, JSON.stringify({ ...failed, to: "1:1.1.0-1", binary, package: { name: "mesh-host", previous: "1:1.0.0-3" } }));
    const runner = new RecordingRunner([
      // dpkg records the running host's version, but not the package revision that was installed.
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1:1.0.0-4\n" } },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1:1.0.0-4\n" } },
      { match: (argv) => argv[0] === "apt-get" && argv.includes("install"), result: {} },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1:1.0.0-3\n" } },
    ]);
    await settleRolledBackPackage(store, { runner, root: "/" }, "1.0.0", silentLogger());
    expect(runner.argvs.find((a) => a[0] === "apt-get")).toContain("mesh-host=1:1.0.0-3");
    expect(JSON.parse(String(await store.read(FAILED_KEY))).note).toBeUndefined();
  });

  it("a failure that passes (dpkg's lock held, the repository unreachable) is not kept as the failure's note: the next reconcile tries again", async () => {
    await store.write(FAILED_KEY, JSON.stringify({ ...failed, binary }));
    let aptCalls = 0;
    const runner = new RecordingRunner([
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" } },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" } },
      {
        match: (argv) => argv[0] === "apt-get" && argv.includes("install") && aptCalls++ === 0,
        result: {
          code: 100,
          stderr: "E: Failed to fetch http://mesh.example/apt/pool/mesh-host_1.0.0_amd64.deb  Temporary failure resolving 'mesh.example'\n",
        },
      },
      // The next reconcile: the mirror is back.
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" } },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" } },
      // apt-get puts the same version's binary in place as it reinstalls.
      { match: (argv) => argv[0] === "apt-get" && argv.includes("install") && aptCalls++ === 1 && (installOver("binary 1.0.0, reinstalled\n"), true) },
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.0.0\n" } },
    ]);
    const pctx = { runner, root: "/", lockHeld: async () => false };
    const up = new SelfUpgrade({
      store,
      binary,
      running: "1.0.0",
      trialMs: 60_000,
      publicKey: null,
      log: silentLogger(),
      startedAs: await binaryIdentity(binary),
    });
    expect(await up.settleHostPackage(pctx)).toMatch(
      /mesh-host 1\.1\.0 was rolled back, but dpkg's record is not yet back to 1\.0\.0 \(tried again\): .*Temporary failure resolving/,
    );
    expect(FailedUpgrade.parse(JSON.parse(String(await store.read(FAILED_KEY)))).note).toBeUndefined();
    expect(await up.settleHostPackage(pctx)).toBeNull();
    expect(runner.argvs.filter((a) => a[0] === "apt-get" && a.includes("mesh-host=1.0.0"))).toHaveLength(2);
    expect(FailedUpgrade.parse(JSON.parse(String(await store.read(FAILED_KEY)))).note).toBeUndefined();
    // The binary the reinstall put in place is not a new host to start.
    expect(await up.replacedOnDisk()).toBe(false);
    // Done for this process: not asked of dpkg again.
    const asked = runner.argvs.length;
    expect(await up.settleHostPackage(pctx)).toBeNull();
    expect(runner.argvs.length).toBe(asked);
  });

  it("keeps what it could not put back in the failed record, to be reported with the failure", async () => {
    await store.write(FAILED_KEY, JSON.stringify({ ...failed, binary }));
    // A sandbox root with no apt sources and no .deb of 1.0.0: only the .prev binary stands.
    const runner = new RecordingRunner([{ match: ["dpkg-query"], result: { stdout: "install ok installed\t1.1.0\n" }, repeat: true }]);
    await settleRolledBackPackage(store, { runner, root: dir }, "1.0.0", silentLogger());
    expect(JSON.parse(String(await store.read(FAILED_KEY))).note).toMatch(/dpkg still records mesh-host 1\.1\.0/);
    expect(runner.argvs.some((a) => a[0] === "apt-get" || a[0] === "dpkg")).toBe(false);
  });

  it("does nothing when dpkg already records the running version", async () => {
    await store.write(FAILED_KEY, JSON.stringify({ ...failed, binary }));
    const runner = dpkgSays("1.0.0");
    await settleRolledBackPackage(store, { runner, root: "/" }, "1.0.0", silentLogger());
    expect(runner.argvs.map((a) => a[0])).toEqual(["dpkg-query"]);
  });
});

describe("while an upgrade is on trial", () => {
  it("a second upgrade of mesh-host, by package or host resource, is refused, not started; once kept, it goes ahead", async () => {
    // 1.0.0 runs on trial (upgraded from 0.9.0): its breadcrumb and .prev are the way back.
    writeFileSync(`${binary}.prev`, "binary 0.9.0\n", { mode: 0o755 });
    const crumb = { from: "0.9.0", to: "1.0.0", sha256: "a".repeat(64), binary, deadline: new Date().toISOString(), trialMs: 60_000 };
    await store.write(BREADCRUMB_KEY, JSON.stringify(crumb));
    const trial = (await UpgradeTrial.begin(store, "1.0.0", silentLogger()))!;
    try {
      const up = await host(dpkgSays("1.0.0"), { trial });
      await expect(up.beforeHostPackage("1.1.0")).rejects.toThrow(
        /the mesh-host package 1\.1\.0: not started while mesh-host 1\.0\.0 \(upgraded from 0\.9\.0\) is on trial, its rollback pending/,
      );
      const resource = { type: "host", id: "h", version: "1.1.0", sha256: "b".repeat(64), signature: "x", onDrift: "correct", allowDowngrade: false } as const;
      await expect(up.upgrade(resource, async () => "")).rejects.toThrow(/mesh-host 1\.1\.0: not started while mesh-host 1\.0\.0 .* is on trial/);
      // The trial's way back is untouched.
      expect(readFileSync(`${binary}.prev`, "utf8")).toBe("binary 0.9.0\n");
      expect(Breadcrumb.parse(JSON.parse(String(await store.read(BREADCRUMB_KEY))))).toMatchObject({ from: "0.9.0", to: "1.0.0" });

      await trial.commit();
      await up.beforeHostPackage("1.1.0");
      expect(Breadcrumb.parse(JSON.parse(String(await store.read(BREADCRUMB_KEY))))).toMatchObject({ from: "1.0.0", to: "1.1.0" });
    } finally {
      trial.stop();
    }
  });
});
