// The `package` resource: a Debian package installed (at an exact version) or absent,
// observed with dpkg-query and changed with dpkg or apt-get, every command through a Runner.
// status: ready for wiring
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { normalDebianVersion, sameDebianVersion, type PackageResource, type RemoteSource } from "@mesh/protocol";
import { CommandFailedError, runOrThrow, type RunOptions, type RunResult, type Runner } from "../runner/runner";
import { systemClock, type Clock } from "../clock";
import { sleep } from "../sleep";

export interface PackageContext {
  runner: Runner;
  /** "/" for the machine itself, or a sandbox directory holding its own ROOT/var/lib/dpkg. */
  root: string;
  /** Fetches a source and returns a local .deb path whose sha256 has been verified. */
  download?: (source: RemoteSource) => Promise<string>;
  /**
   * Directories that may hold original .debs to restore an adopted version from
   * (the host's cache of downloaded sources, say); ROOT/var/cache/apt/archives is always searched.
   */
  debDirs?: string[];
  /**
   * Sandbox roots only. dpkg runs maintainer scripts chrooted into the root, so a
   * package with scripts needs a shell in there; `true` runs them outside it instead
   * (--force-script-chrootless, with DPKG_ROOT set). Off by default because a script
   * that ignores DPKG_ROOT then changes the real machine, which --root promises not to do.
   */
  chrootlessScripts?: boolean;
  /** The agent's clock, for the wait on dpkg's locks (the system's by default). */
  clock?: Clock;
  /** How long to wait for dpkg's locks to be free before a change (DPKG_LOCK_WAIT_MS by default). */
  lockWaitMs?: number;
  /** Whether another process holds the lock file at this path (/proc/locks by default). */
  lockHeld?: (path: string) => Promise<boolean>;
}

/**
 * A package change that failed for a reason that passes (dpkg's lock held by unattended-upgrades or an
 * operator's apt, a repository unreachable, a name that does not resolve): the report says it, and the
 * reconcile's backoff tries again; it is never kept as a lasting failure of the package.
 */
export class TransientPackageError extends CommandFailedError {
  readonly transient = true;
  constructor(argv: string[], result: RunResult, what?: string) {
    super(argv, result, what);
    this.name = "TransientPackageError";
  }
}

/** Whether a package change failed for a reason that passes (see TransientPackageError). */
export function isTransientPackageError(err: unknown): boolean {
  return err instanceof TransientPackageError;
}

/** What apt and dpkg say when the cause is elsewhere and passes: a lock held, a mirror or DNS down. */
const TRANSIENT_OUTPUT =
  /Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock the administration directory|dpkg status database is locked|Temporary failure resolving|Could not resolve|Failed to fetch|Could not connect to|Unable to connect to|Connection timed out|Connection failed|Network is unreachable/i;

/** How long a change waits for dpkg's locks, as apt's own DPkg::Lock::Timeout below. */
export const DPKG_LOCK_WAIT_MS = 120_000;
const LOCK_POLL_MS = 1_000;

export interface ObservedPackage {
  name: string;
  /** Fully installed and configured; a half-configured or unpacked package is not. */
  installed: boolean;
  /** The version whose files are on the machine, or null when none are (not installed, or only config files left). */
  version: string | null;
  /** dpkg's own words: "install ok installed", "install ok half-configured", "not-installed", ... */
  status: string;
}

/** What the host keeps when it adopts a package, to put it back when the resource leaves the declaration. */
export type PackageSnapshot = ObservedPackage & {
  /** A .deb of the original version found when adopting, if any; restore looks again anyway. */
  deb: string | null;
};

export interface PackageApplied {
  action: "none" | "installed" | "removed";
  via: "dpkg" | "apt-get" | null;
  observed: ObservedPackage;
}

export interface PackageRestore {
  /** "approximate": the original could not be put back exactly; `detail` says what stands instead. */
  outcome: "unchanged" | "restored" | "approximate";
  detail: string;
  observed: ObservedPackage;
}

export interface DpkgAudit {
  clean: boolean;
  /** Packages `dpkg --audit` names (half-configured, unpacked, half-installed, triggers pending, ...). */
  packages: string[];
  output: string;
}

export interface DpkgRepair {
  /** What was wrong before; `clean` means nothing was run. */
  found: DpkgAudit;
  /** `dpkg --configure -a` ran (its output is in `output`). */
  ran: boolean;
  /** What is still wrong; a half-installed package needs reinstalling, which configure cannot do. */
  after: DpkgAudit;
  output: string;
}

/**
 * MESH_DPKG_SCRIPTS_CHROOTLESS=1: in a sandbox root (tests, dry runs) that has no shell of its
 * own, maintainer scripts run outside it with DPKG_ROOT set. Never on the real root.
 */
export function chrootlessScriptsFromEnv(root: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return root !== "/" && env.MESH_DPKG_SCRIPTS_CHROOTLESS === "1";
}

/** The message a sandbox gives when only apt could do what is declared. */
export const APT_NEEDS_REAL_ROOT = "installing from an apt repository needs --root / (or a sandbox root with its own ROOT/etc/apt sources); give a source .deb";

/** Installs can download and run maintainer scripts: far longer than the runner's default. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;
/** debconf must never wait for an answer: nobody is there to give it. */
/**
 * dpkg's and apt's words are read (a lock held, a name resolution that failed, "no packages found"):
 * in the C locale, whatever LANG systemd hands the host, or a German machine's passing failure would read as lasting.
 */
const C_LOCALE = { LC_ALL: "C" };
const UNATTENDED_ENV = { DEBIAN_FRONTEND: "noninteractive", ...C_LOCALE };
/** A changed conffile keeps the admin's version instead of prompting. */
const CONFFILE_FLAGS = ["--force-confdef", "--force-confold"];
const STATUS_LINE =
  /^(unknown|install|hold|deinstall|purge) (ok|reinstreq) (not-installed|config-files|half-installed|unpacked|half-configured|triggers-awaited|triggers-pending|installed)\t(.*)$/;

export async function observePackage(ctx: PackageContext, name: string): Promise<ObservedPackage> {
  const argv = ["dpkg-query", ...adminDirArgs(ctx), "-W", "--showformat=${Status}\\t${Version}\\n", name];
  const result = await ctx.runner.run(argv, { env: C_LOCALE });
  if (result.code === 1 && /no packages found matching/.test(result.stderr)) {
    return { name, installed: false, version: null, status: "not-installed" };
  }
  if (result.code !== 0) throw new CommandFailedError(argv, result, `cannot observe package ${name}`);
  return parseStatus(name, result.stdout, argv);
}

/** Parses dpkg-query's `${Status}\t${Version}` lines; anything else is an error, never a guess. */
export function parseStatus(name: string, stdout: string, argv: string[] = []): ObservedPackage {
  const lines = stdout.split("\n").filter((l) => l !== "");
  const parsed = lines.map((line) => {
    const m = STATUS_LINE.exec(line);
    if (!m) throw new Error(`unexpected output from \`${argv.join(" ")}\`: ${JSON.stringify(line.slice(0, 200))}`);
    const state = m[3]!;
    const version = state === "not-installed" || state === "config-files" ? null : m[4]! || null;
    return { name, installed: state === "installed", version, status: state === "not-installed" ? "not-installed" : `${m[1]} ${m[2]} ${state}` };
  });
  if (parsed.length === 0) return { name, installed: false, version: null, status: "not-installed" };
  // Several lines are several architectures of one name (multiarch): the installed one speaks for it.
  return parsed.find((p) => p.installed) ?? parsed[0]!;
}

/** Whether `observed` is what `resource` declares. */
export function packageSatisfies(resource: PackageResource, observed: ObservedPackage): boolean {
  if (resource.state === "absent") return observed.version === null && !observed.installed;
  if (!observed.installed) return false;
  return resource.version === undefined || sameDebianVersion(observed.version, resource.version);
}

/**
 * The observed state as a digest input. The version counts only when the declaration pins
 * one or the package is broken, so "installed, any version" does not drift on an upgrade.
 */
export function packageState(observed: ObservedPackage, declared?: PackageResource): { name: string; installed: boolean; version: string | null } {
  const hideVersion = declared !== undefined && declared.version === undefined && observed.installed;
  return { name: observed.name, installed: observed.installed, version: hideVersion ? null : normaliseVersion(observed.version) };
}

/** The declared state in the shape of `packageState`, so equal digests mean no drift. */
export function declaredPackageState(resource: PackageResource): { name: string; installed: boolean; version: string | null } {
  const installed = resource.state === "installed";
  return { name: resource.name, installed, version: installed ? normaliseVersion(resource.version ?? null) : null };
}

/** One line on how the package differs from its declaration, or null when it does not. */
export function describePackageDrift(resource: PackageResource, observed: ObservedPackage): string | null {
  if (packageSatisfies(resource, observed)) return null;
  const broken = observed.version !== null && !observed.installed;
  if (resource.state === "absent")
    return broken ? `${observed.status} at ${observed.version}, declared absent` : `installed at ${observed.version}, declared absent`;
  if (broken) return `${observed.status} at ${observed.version}, declared installed`;
  if (!observed.installed) return resource.version ? `not installed, declared ${resource.version}` : "not installed, declared installed";
  return `version ${observed.version}, declared ${resource.version}`;
}

/**
 * Bring the package to its declaration, then observe again and throw unless it got there.
 * Absent is `dpkg --remove`, not `apt-get remove` and not `--purge`: dpkg refuses to take
 * the packages that depend on it (apt -y would remove them, and the host removes only what
 * it owns), it works in a sandbox, and it keeps conffiles, as `apt-get remove` does, so an
 * adopted package restored later comes back with its admin's configuration.
 */
export async function applyPackage(ctx: PackageContext, resource: PackageResource, observed: ObservedPackage): Promise<PackageApplied> {
  if (packageSatisfies(resource, observed)) return { action: "none", via: null, observed };
  let via: PackageApplied["via"];
  if (resource.state === "absent") {
    await runDpkg(ctx, ["--remove", resource.name], `cannot remove package ${resource.name}`);
    via = "dpkg";
  } else if (resource.source) {
    if (!ctx.download) throw new Error(`package ${resource.name} has a source but the host was given no way to download it`);
    const deb = await ctx.download(resource.source);
    await checkDeb(ctx, deb, resource.name, resource.version);
    await installDeb(ctx, deb, resource.name);
    via = "dpkg";
  } else {
    await aptInstall(ctx, resource.name, resource.version);
    via = "apt-get";
  }
  const after = await observePackage(ctx, resource.name);
  if (!packageSatisfies(resource, after)) {
    throw new Error(`package ${resource.name} is not as declared after ${via} ran: ${describePackageDrift(resource, after)}`);
  }
  return { action: resource.state === "absent" ? "removed" : "installed", via, observed: after };
}

/** Record the package as it stands before the host first changes it (adoption). */
export async function snapshotPackage(ctx: PackageContext, name: string): Promise<PackageSnapshot> {
  const observed = await observePackage(ctx, name);
  const deb = observed.version === null ? null : await findDeb(ctx, name, observed.version);
  return { ...observed, deb };
}

/**
 * Put an adopted package back as the snapshot found it. An exact version needs its .deb
 * (from the snapshot, `debDirs` or apt's cache) or apt on the real root; without either
 * the package is left installed at the version it has and the result says "approximate".
 */
export async function restorePackage(ctx: PackageContext, snapshot: PackageSnapshot): Promise<PackageRestore> {
  const { name } = snapshot;
  const now = await observePackage(ctx, name);
  if (snapshot.version === null) {
    // Absent before: purge if it was never there, only remove if its conffiles were.
    const wasConfigOnly = snapshot.status.endsWith(" config-files");
    if (now.version === null && now.status.endsWith(" config-files") === wasConfigOnly) {
      return { outcome: "unchanged", detail: `${name} is ${describe(now)}, as before`, observed: now };
    }
    if (now.version === null && wasConfigOnly) {
      return { outcome: "approximate", detail: `${name} is ${describe(now)}; its original config files cannot be brought back`, observed: now };
    }
    await runDpkg(ctx, [wasConfigOnly ? "--remove" : "--purge", name], `cannot restore package ${name} to absent`);
    const after = await observePackage(ctx, name);
    if (after.version !== null) throw new Error(`package ${name} is still ${describe(after)} after removal`);
    return { outcome: "restored", detail: `${name} removed, as it was before the host adopted it`, observed: after };
  }

  const version = snapshot.version;
  if (now.installed && sameDebianVersion(now.version, version)) {
    return { outcome: "unchanged", detail: `${name} is installed at ${version}, as before`, observed: now };
  }
  const deb = (snapshot.deb && (await debMatches(ctx, snapshot.deb, name, version)) ? snapshot.deb : null) ?? (await findDeb(ctx, name, version));
  if (deb) {
    await installDeb(ctx, deb, name);
    return exactOrThrow(ctx, name, version, `from ${deb}`);
  }
  if (await aptAvailable(ctx)) {
    try {
      await aptInstall(ctx, name, version);
      return await exactOrThrow(ctx, name, version, "with apt-get");
    } catch (err) {
      if (!(err instanceof CommandFailedError) || !versionUnavailable(err.result)) throw err;
      if (!now.installed) await aptInstall(ctx, name, undefined);
      const after = await observePackage(ctx, name);
      return {
        outcome: "approximate",
        detail: `${name} is installed at ${after.version}: the original version ${version} is no longer in the apt sources and no .deb of it was found`,
        observed: after,
      };
    }
  }
  if (now.installed) {
    return {
      outcome: "approximate",
      detail: `${name} left installed at ${now.version}: no .deb of the original version ${version} was found, and ${APT_NEEDS_REAL_ROOT}`,
      observed: now,
    };
  }
  throw new Error(`cannot restore package ${name} to ${version}: no .deb of it was found, and ${APT_NEEDS_REAL_ROOT}`);
}

/** `dpkg --audit`: any output means a package was left half-way (an interrupted configure, say). */
export async function auditDpkg(ctx: PackageContext): Promise<DpkgAudit> {
  const argv = ["dpkg", ...adminDirArgs(ctx), "--audit"];
  const result = await ctx.runner.run(argv, { env: C_LOCALE });
  // Some dpkg versions exit 1 when they find something; the output is what tells.
  if (result.code !== 0 && result.code !== 1) throw new CommandFailedError(argv, result, "cannot audit dpkg");
  const output = result.stdout.trim();
  const packages = [...output.matchAll(/^ ([a-z0-9][a-z0-9+.-]+(?::[a-z0-9-]+)?)\s/gm)].map((m) => m[1]!);
  return { clean: output === "", packages: [...new Set(packages)], output };
}

/** Finish what an interrupted dpkg left (`dpkg --configure -a`), before the next apply; reports rather than throws. */
export async function repairDpkg(ctx: PackageContext): Promise<DpkgRepair> {
  const found = await auditDpkg(ctx);
  if (found.clean) return { found, ran: false, after: found, output: "" };
  await prepareSandbox(ctx);
  const result = await runWhenUnlocked(ctx, ["dpkg", ...dpkgArgs(ctx), ...CONFFILE_FLAGS, "--configure", "-a"], {
    env: UNATTENDED_ENV,
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  const after = await auditDpkg(ctx);
  return { found, ran: true, after, output: `${result.stdout}${result.stderr}`.trim() };
}

function adminDirArgs(ctx: PackageContext): string[] {
  return ctx.root === "/" ? [] : [`--admindir=${join(ctx.root, "var/lib/dpkg")}`];
}

/** Under a sandbox, dpkg works on the root's database and logs there, not to the machine's /var/log/dpkg.log. */
function dpkgArgs(ctx: PackageContext): string[] {
  if (ctx.root === "/") return [];
  return [`--root=${ctx.root}`, `--log=${join(ctx.root, "var/log/dpkg.log")}`, ...(ctx.chrootlessScripts ? ["--force-script-chrootless"] : [])];
}

async function prepareSandbox(ctx: PackageContext): Promise<void> {
  if (ctx.root !== "/") await fs.mkdir(join(ctx.root, "var/log"), { recursive: true });
}

async function runDpkg(ctx: PackageContext, args: string[], what: string): Promise<RunResult> {
  await prepareSandbox(ctx);
  return runChange(ctx, ["dpkg", ...dpkgArgs(ctx), ...CONFFILE_FLAGS, ...args], { env: UNATTENDED_ENV, timeoutMs: INSTALL_TIMEOUT_MS }, what);
}

/** A dpkg or apt-get that changes the machine: run once dpkg's locks are free; a failure that passes is a TransientPackageError. */
async function runChange(ctx: PackageContext, argv: string[], opts: RunOptions, what: string): Promise<RunResult> {
  const result = await runWhenUnlocked(ctx, argv, opts);
  if (result.code !== 0 || result.timedOut) throw packageFailure(argv, result, what);
  return result;
}

async function runWhenUnlocked(ctx: PackageContext, argv: string[], opts: RunOptions): Promise<RunResult> {
  await waitForDpkgLocks(ctx, argv);
  return ctx.runner.run(argv, opts);
}

/**
 * What the repository says for good, even inside a "Failed to fetch": the file is not there (a .deb pruned
 * from the pool while the index still names it), or not what the index says. Trying again changes nothing.
 */
const LASTING_OUTPUT = /\b404\s+Not Found|\b410\s+Gone|Hash Sum mismatch|does not have a Release file|File has unexpected size/i;

function packageFailure(argv: string[], result: RunResult, what: string): CommandFailedError {
  // stderr only: apt's errors go there, and stdout carries maintainer scripts' words, which are not apt's.
  return TRANSIENT_OUTPUT.test(result.stderr) && !LASTING_OUTPUT.test(result.stderr)
    ? new TransientPackageError(argv, result, what)
    : new CommandFailedError(argv, result, what);
}

/**
 * Before dpkg or apt-get changes anything: wait (bounded, on the agent's clock) while another process
 * holds dpkg's locks (ROOT/var/lib/dpkg/lock-frontend, lock): unattended-upgrades or an operator's apt
 * runs for minutes, and failing at once would only make a failure of what is merely busy. A lock still
 * held at the end of the wait is a TransientPackageError: the reconcile's backoff tries again.
 */
export async function waitForDpkgLocks(ctx: PackageContext, argv: string[]): Promise<void> {
  const clock = ctx.clock ?? systemClock;
  const held = ctx.lockHeld ?? lockHeldInProcLocks;
  const waitMs = ctx.lockWaitMs ?? DPKG_LOCK_WAIT_MS;
  const dir = join(ctx.root, "var/lib/dpkg");
  const locks = [join(dir, "lock-frontend"), join(dir, "lock")];
  const since = clock.now();
  for (;;) {
    let busy: string | null = null;
    for (const lock of locks) if (await held(lock)) busy = busy ?? lock;
    if (busy === null) return;
    const left = waitMs - (clock.now() - since);
    if (left <= 0) {
      const message = `${busy} is held by another process (unattended-upgrades, an operator's apt?) after waiting ${Math.round(waitMs / 1000)} s`;
      throw new TransientPackageError(argv, { code: -1, stdout: "", stderr: message, signal: null, timedOut: false }, "dpkg is busy");
    }
    await sleep(Math.min(LOCK_POLL_MS, left), { clock });
  }
}

/**
 * Whether a process holds a POSIX lock on the file at `path` (dpkg and apt lock with fcntl), by
 * /proc/locks: a line names the file by device and inode. A machine without /proc/locks cannot tell:
 * not held, and dpkg speaks for itself.
 */
export async function lockHeldInProcLocks(path: string, procLocks = "/proc/locks"): Promise<boolean> {
  const st = await fs.stat(path, { bigint: true }).catch(() => null);
  if (!st) return false;
  const text = await fs.readFile(procLocks, "utf8").catch(() => "");
  return procLocksName(text, st.dev, st.ino);
}

/** Whether /proc/locks text has a lock on the file of device `dev` (glibc's dev_t) and inode `ino`. */
export function procLocksName(text: string, dev: bigint, ino: bigint): boolean {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  for (const m of text.matchAll(/^\d+: (?!->).*?\s([0-9a-f]+):([0-9a-f]+):(\d+)\s/gm)) {
    if (BigInt(`0x${m[1]}`) === major && BigInt(`0x${m[2]}`) === minor && BigInt(m[3]!) === ino) return true;
  }
  return false;
}

async function installDeb(ctx: PackageContext, deb: string, name: string): Promise<void> {
  await runDpkg(ctx, ["--install", deb], `cannot install package ${name} from ${deb}`);
}

/**
 * Whether apt can serve this root: the machine itself, or a sandbox root that carries its own
 * apt sources (ROOT/etc/apt/sources.list or a file in sources.list.d), which apt then reads
 * with Dir=ROOT while dpkg works with --root (see aptRootArgs).
 */
export async function aptAvailable(ctx: PackageContext): Promise<boolean> {
  if (ctx.root === "/") return true;
  const etc = join(ctx.root, "etc/apt");
  if (
    await fs.access(join(etc, "sources.list")).then(
      () => true,
      () => false,
    )
  )
    return true;
  const parts = await fs.readdir(join(etc, "sources.list.d")).catch(() => [] as string[]);
  return parts.some((f) => f.endsWith(".list") || f.endsWith(".sources"));
}

/** apt's options for a sandbox root: its configuration, lists, cache and dpkg database, and dpkg run with --root. */
function aptRootArgs(ctx: PackageContext): string[] {
  if (ctx.root === "/") return [];
  return [
    "-o",
    `Dir=${ctx.root}`,
    "-o",
    `Dir::State::status=${join(ctx.root, "var/lib/dpkg/status")}`,
    // The sandbox's lists and cache belong to whoever runs the host; apt's _apt user may not read them.
    "-o",
    "APT::Sandbox::User=root",
    ...dpkgArgs(ctx).flatMap((a) => ["-o", `DPkg::Options::=${a}`]),
  ];
}

async function aptInstall(ctx: PackageContext, name: string, version: string | undefined): Promise<void> {
  if (!(await aptAvailable(ctx))) throw new Error(`package ${name}: ${APT_NEEDS_REAL_ROOT}`);
  await prepareSandbox(ctx);
  const argv = [
    "apt-get",
    ...aptRootArgs(ctx),
    "install",
    "-y",
    "--no-install-recommends",
    // Never remove another package to make room: the host removes only what it owns.
    "--no-remove",
    // An exact version may be older than what stands; that is what was declared.
    ...(version ? ["--allow-downgrades"] : []),
    "-o",
    "Dpkg::Options::=--force-confdef",
    "-o",
    "Dpkg::Options::=--force-confold",
    // Wait for unattended-upgrades to finish instead of failing at once on its lock.
    "-o",
    "DPkg::Lock::Timeout=120",
    version ? `${name}=${version}` : name,
  ];
  const opts = { env: UNATTENDED_ENV, timeoutMs: INSTALL_TIMEOUT_MS };
  const result = await runWhenUnlocked(ctx, argv, opts);
  if (result.code === 0 && !result.timedOut) return;
  if (!versionUnavailable(result)) throw packageFailure(argv, result, `cannot install package ${name}`);
  // Stale package lists are the usual reason apt does not know a name or version: refresh once.
  await runChange(ctx, ["apt-get", ...aptRootArgs(ctx), "update", "-o", "DPkg::Lock::Timeout=120"], opts, "cannot refresh the apt package lists");
  await runChange(ctx, argv, opts, `cannot install package ${name}`);
}

function versionUnavailable(result: RunResult): boolean {
  return /Unable to locate package|Version '[^']*' for '[^']*' was not found|has no installation candidate/.test(result.stderr);
}

async function exactOrThrow(ctx: PackageContext, name: string, version: string, how: string): Promise<PackageRestore> {
  const after = await observePackage(ctx, name);
  if (!after.installed || !sameDebianVersion(after.version, version)) {
    throw new Error(`package ${name} is ${describe(after)} after restoring ${version} ${how}`);
  }
  return { outcome: "restored", detail: `${name} restored to ${version} ${how}`, observed: after };
}

/** A .deb must be the package (and version) declared: a wrong file is refused before dpkg touches anything. */
async function checkDeb(ctx: PackageContext, deb: string, name: string, version: string | undefined): Promise<void> {
  const fields = await debFields(ctx, deb);
  if (fields.name !== name || (version !== undefined && !sameDebianVersion(fields.version, version))) {
    throw new Error(`the source .deb holds ${fields.name} ${fields.version}, declared ${name}${version ? ` ${version}` : ""}`);
  }
}

async function debFields(ctx: PackageContext, deb: string): Promise<{ name: string; version: string }> {
  const result = await runOrThrow(ctx.runner, ["dpkg-deb", "--field", deb, "Package", "Version"], {}, `cannot read ${deb}`);
  const name = /^Package: (\S+)$/m.exec(result.stdout)?.[1];
  const version = /^Version: (\S+)$/m.exec(result.stdout)?.[1];
  if (!name || !version) throw new Error(`${deb} is not a .deb with a Package and a Version`);
  return { name, version };
}

async function debMatches(ctx: PackageContext, deb: string, name: string, version: string): Promise<boolean> {
  try {
    const fields = await debFields(ctx, deb);
    return fields.name === name && sameDebianVersion(fields.version, version);
  } catch {
    return false;
  }
}

/**
 * A .deb of `name` at `version` in `debDirs` or apt's cache. Files are found by apt's
 * naming (name_version_arch.deb, the epoch's ':' as "%3a" or dropped, as dpkg-name does)
 * and then trusted only after their control fields say the same.
 */
async function findDeb(ctx: PackageContext, name: string, version: string): Promise<string | null> {
  const dirs = [...(ctx.debDirs ?? []), join(ctx.root, "var/cache/apt/archives")];
  const prefixes = [...new Set([version.replace(":", "%3a"), version.replace(/^\d+:/, "")])].map((v) => `${name}_${v}_`);
  for (const dir of dirs) {
    let entries: string[];
    try {
      entries = await fs.readdir(dir);
    } catch {
      continue;
    }
    const candidates = entries.filter((e) => prefixes.some((p) => e.startsWith(p)) && e.endsWith(".deb"));
    for (const file of candidates) {
      const path = join(dir, file);
      if (await debMatches(ctx, path, name, version)) return path;
    }
  }
  return null;
}

/** "0:1.0" and "1.0" are one Debian version (the protocol's one rule, as the control plane's plan has it). */
function normaliseVersion(version: string | null): string | null {
  return version === null ? null : normalDebianVersion(version);
}

function describe(observed: ObservedPackage): string {
  if (observed.installed) return `installed at ${observed.version}`;
  return observed.version === null ? observed.status : `${observed.status} at ${observed.version}`;
}
