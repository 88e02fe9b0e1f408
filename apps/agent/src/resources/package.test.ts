// The package resource against the real dpkg in a sandbox root, with .debs built here by
// dpkg-deb; apt-get from a local repository into the sandbox, and on the real root through the argv it would run.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PackageResource, type RemoteSource } from "@mesh/protocol";
import { ProcessRunner } from "../runner/process-runner";
import { RecordingRunner } from "../runner/recording-runner";
import { CommandFailedError, type RunOptions, type Runner } from "../runner/runner";
import {
  APT_NEEDS_REAL_ROOT,
  applyPackage,
  auditDpkg,
  declaredPackageState,
  describePackageDrift,
  observePackage,
  packageState,
  parseStatus,
  repairDpkg,
  restorePackage,
  snapshotPackage,
  type PackageContext,
} from "./package";

const real = new ProcessRunner();
let base: string;
/** .deb files by "name_version". */
const debs = new Map<string, string>();
/** A control-plane URL per .deb, as a declaration's source names it. */
const sources = new Map<string, RemoteSource>();

function buildDeb(name: string, version: string, postinst?: string): void {
  const dir = join(base, "build", `${name}_${version}`);
  mkdirSync(join(dir, "DEBIAN"), { recursive: true });
  mkdirSync(join(dir, "usr/share/mesh-test"), { recursive: true });
  writeFileSync(
    join(dir, "DEBIAN/control"),
    `Package: ${name}\nVersion: ${version}\nArchitecture: all\nMaintainer: Mesh tests <tests@mesh.invalid>\nDescription: a package for the Mesh host tests\n`,
  );
  writeFileSync(join(dir, `usr/share/mesh-test/${name}`), `${version}\n`);
  if (postinst) {
    writeFileSync(join(dir, "DEBIAN/postinst"), postinst);
    chmodSync(join(dir, "DEBIAN/postinst"), 0o755);
  }
  const deb = join(base, "debs", `${name}_${version}_all.deb`);
  mkdirSync(join(base, "debs"), { recursive: true });
  const result = spawnSync("dpkg-deb", ["--root-owner-group", "--build", dir, deb], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`dpkg-deb failed: ${result.stderr}`);
  debs.set(`${name}_${version}`, deb);
  sources.set(`${name}_${version}`, { url: `/api/files/${name}_${version}.deb`, sha256: createHash("sha256").update(readFileSync(deb)).digest("hex") });
}

// Scripts run outside the sandbox (chrootless) with DPKG_ROOT set: markers there steer them.
const FLAKY_POSTINST = `#!/bin/sh
set -e
if [ -e "$DPKG_ROOT/hang-postinst" ]; then sleep 60; fi
if [ -e "$DPKG_ROOT/fail-postinst" ]; then echo "postinst: told to fail" >&2; exit 1; fi
exit 0
`;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "mesh-pkg-"));
  buildDeb("mesh-test-pkg", "1.0");
  buildDeb("mesh-test-pkg", "2.0");
  buildDeb("mesh-test-flaky", "1.0", FLAKY_POSTINST);
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

let root: string;
let ran: string[][];
let downloads: string[];
let ctx: PackageContext;

/** The real runner, with every argv kept so a test can say what ran. */
const seeing: Runner = {
  run(argv, opts) {
    ran.push(argv);
    return real.run(argv, opts);
  },
};

beforeEach(() => {
  root = mkdtempSync(join(base, "root-"));
  mkdirSync(join(root, "var/lib/dpkg/info"), { recursive: true });
  mkdirSync(join(root, "var/lib/dpkg/updates"), { recursive: true });
  writeFileSync(join(root, "var/lib/dpkg/status"), "");
  ran = [];
  downloads = [];
  ctx = {
    runner: seeing,
    root,
    chrootlessScripts: true,
    async download(source) {
      const key = [...sources].find(([, s]) => s.url === source.url)?.[0];
      if (!key) throw new Error(`no such source ${source.url}`);
      const deb = debs.get(key)!;
      if (createHash("sha256").update(readFileSync(deb)).digest("hex") !== source.sha256) throw new Error("sha256 mismatch");
      downloads.push(key);
      return deb;
    },
  };
});

const pkg = (fields: Partial<PackageResource> = {}) => PackageResource.parse({ type: "package", id: "p", name: "mesh-test-pkg", ...fields });
const fromSource = (version: string, name = "mesh-test-pkg") => pkg({ name, version, source: sources.get(`${name}_${version}`) });
const shipped = (name = "mesh-test-pkg") => join(root, "usr/share/mesh-test", name);
/** dpkg run by someone else on the sandbox; its log stays in the sandbox too. */
function dpkgBehindTheHostsBack(...args: [RunOptions | string, ...string[]]) {
  const opts = typeof args[0] === "string" ? {} : (args.shift() as RunOptions);
  mkdirSync(join(root, "var/log"), { recursive: true });
  return real.run(["dpkg", `--root=${root}`, `--log=${join(root, "var/log/dpkg.log")}`, "--force-script-chrootless", ...(args as string[])], opts);
}

async function reconcile(resource: PackageResource) {
  const observed = await observePackage(ctx, resource.name);
  return applyPackage(ctx, resource, observed);
}

describe("package in a sandbox root, with the real dpkg", () => {
  it("creates: installs from a source .deb, then observes it installed", async () => {
    expect(await observePackage(ctx, "mesh-test-pkg")).toEqual({ name: "mesh-test-pkg", installed: false, version: null, status: "not-installed" });
    const applied = await reconcile(fromSource("1.0"));
    expect(applied).toEqual({
      action: "installed",
      via: "dpkg",
      observed: { name: "mesh-test-pkg", installed: true, version: "1.0", status: "install ok installed" },
    });
    expect(readFileSync(shipped(), "utf8")).toBe("1.0\n");
    expect(ran.some((a) => a[0] === "dpkg" && a.includes("--install") && a.includes(`--root=${root}`))).toBe(true);
    // Its log went to the sandbox, not to the machine's /var/log/dpkg.log.
    expect(readFileSync(join(root, "var/log/dpkg.log"), "utf8")).toContain("status installed mesh-test-pkg:all 1.0");
    expect(packageState(applied.observed, fromSource("1.0"))).toEqual(declaredPackageState(fromSource("1.0")));
  });

  it("is a no-op when the package is as declared: only dpkg-query runs, nothing is downloaded", async () => {
    await reconcile(fromSource("1.0"));
    ran = [];
    downloads = [];
    const applied = await reconcile(fromSource("1.0"));
    expect(applied.action).toBe("none");
    expect(ran.map((a) => a[0])).toEqual(["dpkg-query"]);
    expect(downloads).toEqual([]);
  });

  it("updates 1.0 to 2.0 when the declared version changes", async () => {
    await reconcile(fromSource("1.0"));
    const applied = await reconcile(fromSource("2.0"));
    expect(applied).toMatchObject({ action: "installed", observed: { installed: true, version: "2.0" } });
    expect(readFileSync(shipped(), "utf8")).toBe("2.0\n");
  });

  it("sees drift when the package is removed or changed behind the host's back, and corrects it", async () => {
    const declared = fromSource("1.0");
    await reconcile(declared);
    expect((await dpkgBehindTheHostsBack("--remove", "mesh-test-pkg")).code).toBe(0);
    let observed = await observePackage(ctx, "mesh-test-pkg");
    expect(observed).toMatchObject({ installed: false, version: null });
    expect(packageState(observed, declared)).not.toEqual(declaredPackageState(declared));
    expect(describePackageDrift(declared, observed)).toBe("not installed, declared 1.0");

    expect((await dpkgBehindTheHostsBack("--install", debs.get("mesh-test-pkg_2.0")!)).code).toBe(0);
    observed = await observePackage(ctx, "mesh-test-pkg");
    expect(describePackageDrift(declared, observed)).toBe("version 2.0, declared 1.0");

    // onDrift "correct": the next apply puts the declared version back.
    const applied = await applyPackage(ctx, declared, observed);
    expect(applied.observed.version).toBe("1.0");
    expect(describePackageDrift(declared, applied.observed)).toBeNull();
  });

  it("adopts a package installed at 1.0, applies 2.0, and restores 1.0 from its .deb when released", async () => {
    expect((await dpkgBehindTheHostsBack("--install", debs.get("mesh-test-pkg_1.0")!)).code).toBe(0);
    ctx.debDirs = [join(base, "debs")];
    const snapshot = await snapshotPackage(ctx, "mesh-test-pkg");
    expect(snapshot).toEqual({ name: "mesh-test-pkg", installed: true, version: "1.0", status: "install ok installed", deb: debs.get("mesh-test-pkg_1.0") });
    // The snapshot is what the store keeps: it must survive JSON.
    const kept = JSON.parse(JSON.stringify(snapshot));

    await reconcile(fromSource("2.0"));
    expect(readFileSync(shipped(), "utf8")).toBe("2.0\n");

    const restored = await restorePackage(ctx, kept);
    expect(restored).toMatchObject({ outcome: "restored", observed: { installed: true, version: "1.0" } });
    expect(restored.detail).toContain("restored to 1.0 from");
    expect(readFileSync(shipped(), "utf8")).toBe("1.0\n");
    expect((await restorePackage(ctx, kept)).outcome).toBe("unchanged");
  });

  it("says honestly when the original version cannot be had: left at 2.0, outcome approximate", async () => {
    expect((await dpkgBehindTheHostsBack("--install", debs.get("mesh-test-pkg_1.0")!)).code).toBe(0);
    const snapshot = await snapshotPackage(ctx, "mesh-test-pkg");
    expect(snapshot.deb).toBeNull();
    await reconcile(fromSource("2.0"));
    const restored = await restorePackage(ctx, snapshot);
    expect(restored.outcome).toBe("approximate");
    expect(restored.detail).toBe(`mesh-test-pkg left installed at 2.0: no .deb of the original version 1.0 was found, and ${APT_NEEDS_REAL_ROOT}`);
    expect(restored.observed.version).toBe("2.0");
  });

  it("restores a package that was absent before adoption by purging it", async () => {
    const snapshot = await snapshotPackage(ctx, "mesh-test-pkg");
    expect(snapshot).toMatchObject({ installed: false, version: null, status: "not-installed", deb: null });
    await reconcile(fromSource("1.0"));
    const restored = await restorePackage(ctx, snapshot);
    expect(restored).toMatchObject({ outcome: "restored", observed: { installed: false, version: null, status: "not-installed" } });
    expect(existsSync(shipped())).toBe(false);
  });

  it("removes a package declared absent (dpkg --remove), then is a no-op", async () => {
    await reconcile(fromSource("1.0"));
    const applied = await reconcile(pkg({ state: "absent" }));
    expect(applied).toMatchObject({ action: "removed", via: "dpkg", observed: { installed: false, version: null } });
    expect(existsSync(shipped())).toBe(false);
    expect(ran.some((a) => a[0] === "dpkg" && a.at(-2) === "--remove" && a.at(-1) === "mesh-test-pkg")).toBe(true);
    expect((await reconcile(pkg({ state: "absent" }))).action).toBe("none");
  });

  it("detects a dpkg killed mid-configure (half-configured, dpkg --audit) and repairs it with dpkg --configure -a", async () => {
    writeFileSync(join(root, "hang-postinst"), "");
    // The host (or the machine) dies while the postinst runs: the timeout kills dpkg's whole group.
    const killed = await dpkgBehindTheHostsBack({ timeoutMs: 1_500 }, "--install", debs.get("mesh-test-flaky_1.0")!);
    expect(killed.timedOut).toBe(true);
    rmSync(join(root, "hang-postinst"));

    const observed = await observePackage(ctx, "mesh-test-flaky");
    expect(observed).toEqual({ name: "mesh-test-flaky", installed: false, version: "1.0", status: "install ok half-configured" });
    expect(describePackageDrift(fromSource("1.0", "mesh-test-flaky"), observed)).toBe("install ok half-configured at 1.0, declared installed");
    const audit = await auditDpkg(ctx);
    expect(audit).toMatchObject({ clean: false, packages: ["mesh-test-flaky"] });
    expect(audit.output).toContain("half configured");

    const repair = await repairDpkg(ctx);
    expect(repair).toMatchObject({ found: { clean: false, packages: ["mesh-test-flaky"] }, ran: true, after: { clean: true, packages: [] } });
    expect(await observePackage(ctx, "mesh-test-flaky")).toMatchObject({ installed: true, status: "install ok installed" });
    expect(await repairDpkg(ctx)).toMatchObject({ ran: false, found: { clean: true } });
  });

  it("never reports a failed postinst as installed, and a repair that cannot finish says what is left", async () => {
    writeFileSync(join(root, "fail-postinst"), "");
    const err = await reconcile(fromSource("1.0", "mesh-test-flaky")).catch((e) => e);
    expect(err).toBeInstanceOf(CommandFailedError);
    expect(err.message).toMatch(/cannot install package mesh-test-flaky from .*post-installation script subprocess returned error exit status 1/);
    expect(await observePackage(ctx, "mesh-test-flaky")).toMatchObject({ installed: false, status: "install ok half-configured" });

    const stuck = await repairDpkg(ctx);
    expect(stuck).toMatchObject({ ran: true, after: { clean: false, packages: ["mesh-test-flaky"] } });
    expect(stuck.output).toContain("told to fail");

    rmSync(join(root, "fail-postinst"));
    expect((await repairDpkg(ctx)).after.clean).toBe(true);
  });

  it("by default runs maintainer scripts chrooted into the sandbox, so a bare sandbox fails clearly instead of scripting the real machine", async () => {
    ctx.chrootlessScripts = false;
    const err = await reconcile(fromSource("1.0", "mesh-test-flaky")).catch((e) => e);
    expect(err.message).toContain("unable to execute installed mesh-test-flaky package post-installation script");
    expect(ran.find((a) => a.includes("--install"))).not.toContain("--force-script-chrootless");
  });

  it("refuses a source .deb that is not the declared package or version before dpkg runs", async () => {
    const wrong = pkg({ version: "2.0", source: sources.get("mesh-test-pkg_1.0") });
    await expect(reconcile(wrong)).rejects.toThrow("the source .deb holds mesh-test-pkg 1.0, declared mesh-test-pkg 2.0");
    expect(ran.some((a) => a[0] === "dpkg")).toBe(false);
  });

  it("installs and goes back with apt in a sandbox root that has its own apt sources (apt with Dir=ROOT, dpkg with --root)", async () => {
    // A local repository of both versions, as the control plane's /apt serves them.
    const repo = join(base, "repo");
    mkdirSync(repo, { recursive: true });
    for (const v of ["1.0", "2.0"]) writeFileSync(join(repo, `mesh-test-pkg_${v}_all.deb`), readFileSync(debs.get(`mesh-test-pkg_${v}`)!));
    const index = spawnSync("dpkg-scanpackages", ["--multiversion", "."], { cwd: repo, encoding: "utf8" });
    expect(index.status, index.stderr).toBe(0);
    writeFileSync(join(repo, "Packages"), index.stdout);
    for (const d of ["etc/apt/sources.list.d", "etc/apt/apt.conf.d", "etc/apt/preferences.d", "var/lib/apt/lists/partial", "var/cache/apt/archives/partial"])
      mkdirSync(join(root, d), { recursive: true });
    writeFileSync(join(root, "etc/apt/sources.list.d/mesh.list"), `deb [trusted=yes] file:${repo} ./\n`);

    // apt does not know the package yet (no lists): it refreshes them once, in the sandbox, and installs.
    expect((await reconcile(pkg({ version: "2.0" }))).observed).toMatchObject({ installed: true, version: "2.0" });
    expect(readFileSync(shipped(), "utf8")).toBe("2.0\n");
    const apt = ran.filter((a) => a[0] === "apt-get");
    expect(apt.every((a) => a.includes(`Dir=${root}`) && a.includes(`DPkg::Options::=--root=${root}`))).toBe(true);
    expect(apt.some((a) => a.includes("update"))).toBe(true);
    // Going back to an exact older version is apt's too (a rolled-back upgrade of the host's own package).
    const back = await restorePackage(ctx, { name: "mesh-test-pkg", installed: true, version: "1.0", status: "install ok installed", deb: null });
    expect(back).toMatchObject({ outcome: "restored", detail: "mesh-test-pkg restored to 1.0 with apt-get" });
    expect(readFileSync(shipped(), "utf8")).toBe("1.0\n");
    expect((await auditDpkg(ctx)).clean).toBe(true);
  });

  it("refuses what only apt could do in a sandbox root, and runs nothing", async () => {
    await expect(reconcile(pkg({ version: "1.0" }))).rejects.toThrow(`package mesh-test-pkg: ${APT_NEEDS_REAL_ROOT}`);
    expect(ran.map((a) => a[0])).toEqual(["dpkg-query"]);
  });
});

describe("package on the real root, through the argv it would run", () => {
  const installed = { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.2-1\n" } };
  const missing = { match: ["dpkg-query"], result: { code: 1, stderr: "dpkg-query: no packages found matching nginx\n" } };
  const APT = ["apt-get", "install", "-y", "--no-install-recommends", "--no-remove"];
  const APT_OPTIONS = ["-o", "Dpkg::Options::=--force-confdef", "-o", "Dpkg::Options::=--force-confold", "-o", "DPkg::Lock::Timeout=120"];
  const nginx = (fields: Partial<PackageResource> = {}) => pkg({ name: "nginx", ...fields });

  it("observes with dpkg-query, without --admindir", async () => {
    const runner = new RecordingRunner([installed]);
    expect(await observePackage({ runner, root: "/" }, "nginx")).toEqual({ name: "nginx", installed: true, version: "1.2-1", status: "install ok installed" });
    expect(runner.argvs).toEqual([["dpkg-query", "-W", "--showformat=${Status}\\t${Version}\\n", "nginx"]]);
  });

  it("installs an exact version with apt-get, unattended, never removing another package", async () => {
    const runner = new RecordingRunner([missing, { match: ["apt-get"] }, installed]);
    const applied = await applyPackage({ runner, root: "/" }, nginx({ version: "1.2-1" }), await observePackage({ runner, root: "/" }, "nginx"));
    expect(applied).toMatchObject({ action: "installed", via: "apt-get" });
    expect(runner.argvs[1]).toEqual([...APT, "--allow-downgrades", ...APT_OPTIONS, "nginx=1.2-1"]);
    expect(runner.calls[1]!.opts.env).toEqual({ DEBIAN_FRONTEND: "noninteractive", LC_ALL: "C" });
  });

  it("runs every dpkg, dpkg-query and apt-get in the C locale: their words are read, whatever LANG the host has", async () => {
    const runner = new RecordingRunner([missing, { match: ["apt-get"] }, installed]);
    await applyPackage({ runner, root: "/" }, nginx({ version: "1.2-1" }), await observePackage({ runner, root: "/" }, "nginx"));
    expect(runner.calls.length).toBeGreaterThan(2);
    for (const call of runner.calls) expect(call.opts.env?.LC_ALL, call.argv.join(" ")).toBe("C");
  });

  it("refreshes the package lists once when apt does not know the package, then retries", async () => {
    const runner = new RecordingRunner([
      { match: ["apt-get", "install"], result: { code: 100, stderr: "E: Unable to locate package nginx\n" } },
      { match: ["apt-get", "update"] },
      { match: ["apt-get", "install"] },
      installed,
    ]);
    await applyPackage({ runner, root: "/" }, nginx(), { name: "nginx", installed: false, version: null, status: "not-installed" });
    expect(runner.argvs).toEqual([
      [...APT, ...APT_OPTIONS, "nginx"],
      ["apt-get", "update", "-o", "DPkg::Lock::Timeout=120"],
      [...APT, ...APT_OPTIONS, "nginx"],
      ["dpkg-query", "-W", "--showformat=${Status}\\t${Version}\\n", "nginx"],
    ]);
  });

  it("fails with apt's own words when apt fails, and does not claim the package", async () => {
    const runner = new RecordingRunner([
      { match: ["apt-get", "install"], result: { code: 100, stderr: "E: Could not get lock /var/lib/dpkg/lock-frontend\n" } },
    ]);
    await expect(applyPackage({ runner, root: "/" }, nginx(), { name: "nginx", installed: false, version: null, status: "not-installed" })).rejects.toThrow(
      /cannot install package nginx: `apt-get install .*` exited 100: E: Could not get lock/,
    );
  });

  it("throws when apt-get succeeded but the package is still not as declared", async () => {
    const runner = new RecordingRunner([{ match: ["apt-get"] }, { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.3-1\n" } }]);
    await expect(
      applyPackage({ runner, root: "/" }, nginx({ version: "1.2-1" }), { name: "nginx", installed: false, version: null, status: "not-installed" }),
    ).rejects.toThrow("package nginx is not as declared after apt-get ran: version 1.3-1, declared 1.2-1");
  });

  it("removes with dpkg --remove, which refuses to take dependants, not apt-get remove", async () => {
    const runner = new RecordingRunner([
      {
        match: ["dpkg", "--force-confdef"],
        result: { code: 2, stderr: "dpkg: dependency problems prevent removal of nginx:\n nginx-extras depends on nginx.\n" },
      },
    ]);
    const err = await applyPackage({ runner, root: "/" }, nginx({ state: "absent" }), {
      name: "nginx",
      installed: true,
      version: "1.2-1",
      status: "install ok installed",
    }).catch((e) => e);
    expect(runner.argvs).toEqual([["dpkg", "--force-confdef", "--force-confold", "--remove", "nginx"]]);
    expect(err.message).toContain("nginx-extras depends on nginx");
  });

  it("restores an adopted version with apt-get when no .deb of it is found", async () => {
    const runner = new RecordingRunner([
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.3-1\n" } },
      { match: ["apt-get", "install"] },
      installed,
    ]);
    const restored = await restorePackage(
      { runner, root: "/", debDirs: [join(base, "no-such-dir")] },
      { name: "nginx", installed: true, version: "1.2-1", status: "install ok installed", deb: null },
    );
    expect(restored).toMatchObject({ outcome: "restored", detail: "nginx restored to 1.2-1 with apt-get" });
    expect(runner.argvs[1]).toEqual([...APT, "--allow-downgrades", ...APT_OPTIONS, "nginx=1.2-1"]);
  });

  it("restores to any version, reported approximate, when apt no longer has the original", async () => {
    const gone = { match: ["apt-get", "install"], result: { code: 100, stderr: "E: Version '1.2-1' for 'nginx' was not found\n" } };
    const runner = new RecordingRunner([
      { match: ["dpkg-query"], result: { stdout: "install ok installed\t1.3-1\n" }, repeat: true },
      gone,
      { match: ["apt-get", "update"] },
      gone,
    ]);
    const restored = await restorePackage(
      { runner, root: "/" },
      { name: "nginx", installed: true, version: "1.2-1", status: "install ok installed", deb: null },
    );
    expect(restored.outcome).toBe("approximate");
    expect(restored.detail).toBe("nginx is installed at 1.3-1: the original version 1.2-1 is no longer in the apt sources and no .deb of it was found");
  });

  it("audits the machine's dpkg and reads the packages it names", async () => {
    const output =
      "The following packages are only half configured, probably due to problems\nconfiguring them the first time.  The configuration should be retried using\ndpkg --configure <package> or the configure menu option in dselect:\n libfoo:amd64     a library\n bar              a tool\n";
    const runner = new RecordingRunner([{ match: ["dpkg", "--audit"], result: { stdout: output } }]);
    expect(await auditDpkg({ runner, root: "/" })).toEqual({ clean: false, packages: ["libfoo:amd64", "bar"], output: output.trim() });
  });
});

describe("parseStatus", () => {
  it.each([
    ["install ok installed\t1.0\n", { installed: true, version: "1.0", status: "install ok installed" }],
    ["install ok half-configured\t1.0\n", { installed: false, version: "1.0", status: "install ok half-configured" }],
    ["install reinstreq half-installed\t1.0\n", { installed: false, version: "1.0", status: "install reinstreq half-installed" }],
    ["install ok unpacked\t1:2.0-1\n", { installed: false, version: "1:2.0-1", status: "install ok unpacked" }],
    ["deinstall ok config-files\t1.0\n", { installed: false, version: null, status: "deinstall ok config-files" }],
    ["unknown ok not-installed\t\n", { installed: false, version: null, status: "not-installed" }],
    ["install ok unpacked\t1.0\ninstall ok installed\t1.0\n", { installed: true, version: "1.0", status: "install ok installed" }],
  ])("%j", (stdout, want) => {
    expect(parseStatus("x", stdout)).toEqual({ name: "x", ...want });
  });

  it("refuses output it does not understand instead of guessing", () => {
    expect(() => parseStatus("x", "garbage\n", ["dpkg-query"])).toThrow('unexpected output from `dpkg-query`: "garbage"');
  });
});
