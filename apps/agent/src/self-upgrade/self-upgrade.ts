// Putting a verified release over the running binary: write beside it, fsync, keep
// the old one as `.prev`, leave the breadcrumb, rename. The daemon then reports and exits 0.
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, promises as fs } from "node:fs";
import { basename, dirname, join } from "node:path";
import { HostVersion, normalDebianVersion, type HostResource } from "@mesh/protocol";
import type { SourceFetcher } from "../resources/file-source";
import type { Logger } from "../log";
import { syncDir, writeTempFile } from "../fs/atomic-file";
import type { Store } from "../store/store";
import { observePackage, type PackageContext } from "../resources/package";
import { hostCommand, runningAsSea } from "./binary-path";
import { binaryIdentity, sameBinary, type BinaryIdentity } from "./binary-watch";
import { HOST_PACKAGE, samePackageVersion, settleRolledBackPackage } from "./host-package";
import { compareVersions, refuseRelease } from "./release";
import { NO_RELEASE_KEY } from "./release-key";
import { BREADCRUMB_KEY, Breadcrumb, EXITED_KEY, FAILED_KEY, FailedUpgrade, PACKAGE_VERSION_PENDING, SCRIPT_ROLLBACK_REASON, readJson } from "./upgrade-files";
import { ProcessRunner } from "../runner/process-runner";
import { msFromEnv } from "../env-number";
import { systemClock, type Clock } from "../clock";
import { outputOf, type Runner } from "../runner/runner";

export interface SelfUpgradeOptions {
  store: Store;
  /** The file the supervisor starts (see binary-path.ts). */
  binary: string;
  /** The running version (HOST_VERSION). */
  running: string;
  /** How long the new binary has to reach the control plane before it puts the old one back. */
  trialMs: number;
  publicKey: string | null;
  log: Logger;
  /** The binary as it was when this process started; null: never check whether it was replaced. */
  startedAs?: BinaryIdentity | null;
  /** dpkg on the host's root, to tell a package upgrade (and its previous version) from a bare file swap. */
  packages?: PackageContext | null;
  /**
   * The previous package version being put back in dpkg's record in the background (settleAtStart):
   * while it runs, the binary its reinstall puts in place is not a new one; it resolves with that binary.
   */
  settling?: Promise<BinaryIdentity | null> | null;
  /**
   * This start's trial, if it is one: the previous binary its rollback puts back is no replacement,
   * and while it is active (a rollback still possible) no second upgrade is started.
   */
  trial?: { readonly rollingBack: boolean; readonly active?: boolean; readonly upgrade?: { from: string; to: string }; supersede?(): void } | null;
  /** Runs `mesh-host version` on the new binary; a ProcessRunner by default. */
  runner?: Runner;
  /** The agent's one clock (decision 0050): the trial's deadline is taken from it. The system's by default. */
  clock?: Clock;
}

const PENDING = Symbol("pending");

/** The default trial: long enough for a slow link's first backoff, short enough that a bad release does not linger. */
export const DEFAULT_TRIAL_MS = 60_000;

/** MESH_UPGRADE_TRIAL_MS, read once at start: a value that is not a whole number of ms above 0 is refused, naming it. */
export function trialMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return msFromEnv(env, "MESH_UPGRADE_TRIAL_MS", DEFAULT_TRIAL_MS);
}

/** The control plane's own artifact of a version, by the /download naming convention (uname -m arch). */
export function defaultReleaseUrl(version: string): string {
  const arch = ({ x64: "x86_64", arm64: "aarch64" } as Record<string, string>)[process.arch] ?? process.arch;
  return `/download/mesh-host-${version}-linux-${arch}`;
}

export class SelfUpgrade {
  /** The release now at the binary's path, still to be started by the supervisor. */
  staged: { from: string; to: string } | null = null;

  private replaced = false;
  /** dpkg's record after a rolled-back package upgrade was put back, or needed nothing, in this process. */
  private settledPackage = false;
  /** The binary as it was when the host's own package was about to be installed over it. */
  private beforePackage: BinaryIdentity | null = null;

  constructor(private readonly opts: SelfUpgradeOptions) {}

  /**
   * Before the host's own package is installed over it: refused if the same version was rolled
   * back before; otherwise the running binary gets a second name, BINARY.prev, for the rollback,
   * and the breadcrumb is written before dpkg runs, so a host killed after dpkg replaced the binary
   * but before it reported still puts the new one on trial at the next start (the installation's
   * rollback step and UpgradeTrial read it). afterHostPackage takes it back if nothing was replaced.
   */
  async beforeHostPackage(version: string | undefined, pctx: PackageContext | null = this.opts.packages ?? null): Promise<void> {
    const { store, binary, running } = this.opts;
    if (this.staged) throw new Error(`mesh-host ${this.staged.to} is already in place and starts next; the package waits for it`);
    this.refuseDuringTrial(`the mesh-host package${version ? ` ${version}` : ""}`);
    const failed = await readJson(store, FAILED_KEY, FailedUpgrade);
    if (failed?.package && version !== undefined && samePackageVersion(failed.to, version)) {
      throw new Error(
        `upgrade to mesh-host ${failed.to} failed${failed.at ? ` at ${failed.at}` : ""} and was rolled back to ${running}: ${failed.reason ?? SCRIPT_ROLLBACK_REASON}` +
          `${failed.note ? `; ${failed.note}` : ""}; not tried again until the declaration names another version`,
      );
    }
    const to = version === undefined ? PACKAGE_VERSION_PENDING : version;
    if (!Breadcrumb.shape.to.safeParse(to).success) throw new Error(`mesh-host ${version}: not a Debian version the host can record; refused`);
    // dpkg's exact version before the upgrade (epoch, revision): what a rollback installs again. None
    // recorded (a tarball host taking its first package): the running version is all there is to name.
    const before = pctx ? await observePackage(pctx, HOST_PACKAGE) : null;
    const previous = (before?.installed ? before.version : null) ?? running;
    await fs.rm(`${binary}.prev`, { force: true });
    await fs.link(binary, `${binary}.prev`).catch(() => fs.copyFile(binary, `${binary}.prev`));
    await syncDir(dirname(binary));
    this.beforePackage = await binaryIdentity(binary);
    // A stale marker from an earlier upgrade would make this binary's exit count as the new one's.
    await store.remove(EXITED_KEY);
    const crumb: Breadcrumb = {
      from: running,
      to,
      binary,
      deadline: this.trialDeadline(),
      trialMs: this.opts.trialMs,
      package: { name: HOST_PACKAGE, previous },
    };
    await store.write(BREADCRUMB_KEY, JSON.stringify(crumb));
  }

  /**
   * After the host's own package was applied (or failed to be): when the binary was not replaced,
   * the breadcrumb beforeHostPackage left is taken back, as nothing is on trial. When it was,
   * the breadcrumb stays for replacedOnDisk to complete after the report.
   */
  async afterHostPackage(): Promise<void> {
    const before = this.beforePackage;
    this.beforePackage = null;
    if (!before || this.staged) return;
    const { binary, store, log } = this.opts;
    if (!sameBinary(before, await binaryIdentity(binary))) return;
    await store.remove(BREADCRUMB_KEY);
    log.debug({ binary }, "the host's package left its binary as it was: no upgrade on trial");
  }

  /**
   * Before each reconcile of packages (the package provider's prepare): a rolled-back package upgrade
   * whose dpkg record could not be put back for a reason that passes (a lock held, the repository
   * unreachable) is tried again. The words for the report while it still cannot, else null.
   */
  async settleHostPackage(pctx: PackageContext): Promise<string | null> {
    if (this.settledPackage) return null;
    // The start's own settling still runs (settleAtStart): that one goes on, this one waits its turn.
    if (!(await this.startSettled())) return null;
    const { store, binary, running, log } = this.opts;
    const before = await binaryIdentity(binary);
    const outcome = await settleRolledBackPackage(store, pctx, running, log);
    if (typeof outcome === "object") return outcome.transient;
    this.settledPackage = true;
    // Its reinstall put the same version's binary in place: not a new host to start.
    if (outcome === "settled" && this.opts.startedAs && sameBinary(this.opts.startedAs, before)) this.opts.startedAs = await binaryIdentity(binary);
    return null;
  }

  /**
   * After every apply: whether the binary on disk is no longer the one running (a package put a
   * new one there). The first time it is, the new binary is put on trial as a `host` upgrade would
   * be (breadcrumb, BINARY.prev), and the daemon then reports and exits 0 for the supervisor.
   */
  async replacedOnDisk(): Promise<boolean> {
    if (this.replaced) return true;
    if (!(await this.startSettled())) return false;
    const { startedAs, binary, running, store, log } = this.opts;
    if (!startedAs || this.staged) return false;
    if (sameBinary(startedAs, await binaryIdentity(binary))) return false;
    // Read after the identity: set before the rename, so a file seen renamed back is known to be the old one.
    if (this.opts.trial?.rollingBack) return false;
    // Replaced while this start was still on trial (an operator's apt upgrade): that trial ends here,
    // its deadline disarmed, so it can never roll back over the newer binary or remove its breadcrumb.
    if (this.opts.trial?.active) this.opts.trial.supersede?.();
    this.replaced = true;
    try {
      const next = await this.replacement();
      if (!next) {
        log.error({ binary }, "the host binary was replaced by one that cannot tell its version; exiting for the supervisor to start it, with no trial");
        return true;
      }
      if (next.to === running) {
        // Nothing on trial: the breadcrumb written before the package was installed goes.
        await store.remove(BREADCRUMB_KEY);
        log.info({ binary, version: running }, "the host binary was replaced by the same version; exiting for the supervisor to start it");
        return true;
      }
      const prev = `${binary}.prev`;
      if (!sameBinary(startedAs, await binaryIdentity(prev))) {
        // Not kept before (an operator's apt upgrade): the running file is still readable through /proc.
        await fs.rm(prev, { force: true });
        if (runningAsSea()) await fs.copyFile("/proc/self/exe", prev);
        else log.warn({ binary }, "no copy of the previous host is kept (run as a script): a failed upgrade can go back only through the package");
        await syncDir(dirname(binary));
      }
      // The breadcrumb beforeHostPackage wrote holds dpkg's exact previous version: kept, never rebuilt.
      const before = await readJson(store, BREADCRUMB_KEY, Breadcrumb);
      const pkg = next.package && before?.package && before.from === running ? { ...next.package, previous: before.package.previous } : next.package;
      await store.remove(EXITED_KEY);
      const crumb: Breadcrumb = {
        from: running,
        to: next.to,
        sha256: await sha256File(binary),
        binary,
        deadline: this.trialDeadline(),
        trialMs: this.opts.trialMs,
        ...(pkg ? { package: pkg } : {}),
      };
      await store.write(BREADCRUMB_KEY, JSON.stringify(crumb));
      this.staged = { from: running, to: next.to };
      log.info(
        { from: running, to: next.to, binary, package: next.package?.name },
        "host binary replaced on disk; exiting after this report for the supervisor to start it",
      );
    } catch (err) {
      log.error({ binary, reason: (err as Error).message }, "the host binary was replaced; cannot put it on trial; exiting for the supervisor to start it");
    }
    return true;
  }

  /** The version now at the binary's path: dpkg's, when the host's own package changed, else the binary's own word. */
  private async replacement(): Promise<{ to: string; package?: { name: string; previous: string } } | null> {
    const { packages, running } = this.opts;
    if (packages) {
      const pkg = await observePackage(packages, HOST_PACKAGE).catch(() => null);
      if (pkg?.installed && pkg.version) {
        // The same version reinstalled (`apt-get install --reinstall`, dpkg's record put back after a rollback) is no upgrade.
        if (samePackageVersion(pkg.version, running)) return { to: running };
        return { to: normalDebianVersion(pkg.version), package: { name: HOST_PACKAGE, previous: running } };
      }
    }
    const [cmd, ...args] = hostCommand();
    const out = await outputOf(this.opts.runner ?? new ProcessRunner(), [cmd!, ...args, "version"], { timeoutMs: 10_000 });
    const v = HostVersion.safeParse(out?.trim());
    return v.success ? { to: v.data } : null;
  }

  /**
   * While this start is on trial (its rollback to the previous binary still pending), a second upgrade
   * is refused, not started: its breadcrumb and `.prev` would replace the trial's, and a rollback
   * would then put back the binary on trial instead of the one known to work.
   */
  private refuseDuringTrial(what: string): void {
    const trial = this.opts.trial;
    if (!trial || !(trial.active || trial.rollingBack)) return;
    const on = trial.upgrade ? `mesh-host ${trial.upgrade.to} (upgraded from ${trial.upgrade.from})` : `mesh-host ${this.opts.running}`;
    throw new Error(`${what}: not started while ${on} is on trial, its rollback pending until it reaches the control plane; tried again once the trial ends`);
  }

  /**
   * Whether the start's settling (dpkg's record put back in the background) is over; once it is, the
   * binary its reinstall left becomes the one started as (the same version: no new binary to start).
   */
  private async startSettled(): Promise<boolean> {
    if (!this.opts.settling) return true;
    const settled = await Promise.race([this.opts.settling, Promise.resolve(PENDING)]);
    if (settled === PENDING) return false;
    this.opts.settling = null;
    if (settled && this.opts.startedAs) this.opts.startedAs = settled;
    return true;
  }

  /** When a binary put in place now must have reached the control plane, on the injected clock. */
  private trialDeadline(): string {
    const clock = this.opts.clock ?? systemClock;
    return new Date(clock.now() + this.opts.trialMs).toISOString();
  }

  get running(): string {
    return this.opts.running;
  }

  async upgrade(resource: HostResource, fetchSource: SourceFetcher): Promise<void> {
    const { running, store, binary, log } = this.opts;
    if (this.staged) {
      if (this.staged.to === resource.version) return;
      throw new Error(`mesh-host ${this.staged.to} is already in place and starts next; ${resource.version} waits for it`);
    }
    this.refuseDuringTrial(`mesh-host ${resource.version}`);
    const failed = await readJson(store, FAILED_KEY, FailedUpgrade);
    if (failed && failed.to === resource.version && failed.sha256 === resource.sha256) {
      throw new Error(
        `upgrade to mesh-host ${resource.version} failed${failed.at ? ` at ${failed.at}` : ""} and was rolled back to ${running}: ${failed.reason ?? SCRIPT_ROLLBACK_REASON}; ` +
          `not tried again until the declaration names another version or sha256`,
      );
    }
    // Refused before the download when the key or the version alone decides it.
    if (!this.opts.publicKey) throw new Error(`mesh-host ${resource.version}: ${NO_RELEASE_KEY}; refused`);
    if (compareVersions(resource.version, running) < 0 && !resource.allowDowngrade) {
      throw new Error(`mesh-host ${resource.version} is older than the running ${running}; refused (set allowDowngrade to go back)`);
    }
    const dir = dirname(binary);
    const temp = join(dir, `.${basename(binary)}.new-${randomBytes(6).toString("hex")}`);
    const prev = `${binary}.prev`;
    const mode = (await fs.stat(binary)).mode & 0o7777;
    // Streamed beside the binary (capped, hashed as it comes), verified, and only then renamed over it.
    const publicKey = this.opts.publicKey;
    await writeTempFile(
      temp,
      async (fh) => {
        const sha = await fetchSource(resource.source ?? { url: defaultReleaseUrl(resource.version), sha256: resource.sha256 }, fh);
        const refusal = refuseRelease(sha, resource, running, publicKey);
        if (refusal) throw new Error(refusal);
      },
      { mode },
    );
    try {
      // A second name for the running inode: `.prev` is the old binary itself, and the path is never empty.
      await fs.rm(prev, { force: true });
      await fs.link(binary, prev).catch(() => fs.copyFile(binary, prev));
      await syncDir(dir);
      // A stale marker from an earlier upgrade would make the old binary's exit count as the new one's.
      await store.remove(EXITED_KEY);
      const crumb: Breadcrumb = {
        from: running,
        to: resource.version,
        sha256: resource.sha256,
        binary,
        deadline: this.trialDeadline(),
        trialMs: this.opts.trialMs,
      };
      await store.write(BREADCRUMB_KEY, JSON.stringify(crumb));
      await fs.rename(temp, binary);
      await syncDir(dir);
    } catch (err) {
      await fs.rm(temp, { force: true });
      await store.remove(BREADCRUMB_KEY).catch(() => undefined);
      throw new Error(`cannot put mesh-host ${resource.version} in place at ${binary}: ${(err as Error).message}`);
    }
    this.staged = { from: running, to: resource.version };
    log.info({ from: running, to: resource.version, binary }, "new host binary in place; exiting after this report for the supervisor to start it");
  }
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
