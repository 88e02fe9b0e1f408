// Putting a verified release over the running binary: write beside it, fsync, keep
// the old one as `.prev`, leave the breadcrumb, rename. The daemon then reports and exits 0.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { HostResource } from "@mesh/protocol";
import type { SourceFetcher } from "../resources/file-source";
import type { Logger } from "../log";
import { syncDir } from "../resources/atomic-write";
import type { Store } from "../store/store";
import { compareVersions, refuseRelease } from "./release";
import { NO_RELEASE_KEY } from "./release-key";
import { BREADCRUMB_KEY, EXITED_KEY, FAILED_KEY, FailedUpgrade, SCRIPT_ROLLBACK_REASON, readJson, type Breadcrumb } from "./upgrade-files";

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
}

/** The default trial: long enough for a slow link's first backoff, short enough that a bad release does not linger. */
export const DEFAULT_TRIAL_MS = 60_000;

export function trialMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.MESH_UPGRADE_TRIAL_MS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_TRIAL_MS;
}

/** The control plane's own artifact of a version, by the /download naming convention (uname -m arch). */
export function defaultReleaseUrl(version: string): string {
  const arch = ({ x64: "x86_64", arm64: "aarch64" } as Record<string, string>)[process.arch] ?? process.arch;
  return `/download/mesh-host-${version}-linux-${arch}`;
}

export class SelfUpgrade {
  /** The release now at the binary's path, still to be started by the supervisor. */
  staged: { from: string; to: string } | null = null;

  constructor(private readonly opts: SelfUpgradeOptions) {}

  get running(): string {
    return this.opts.running;
  }

  async upgrade(resource: HostResource, fetchSource: SourceFetcher): Promise<void> {
    const { running, store, binary, log } = this.opts;
    if (this.staged) {
      if (this.staged.to === resource.version) return;
      throw new Error(`mesh-host ${this.staged.to} is already in place and starts next; ${resource.version} waits for it`);
    }
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
    const fh = await fs.open(temp, "wx", mode);
    try {
      const sha = await fetchSource(resource.source ?? { url: defaultReleaseUrl(resource.version), sha256: resource.sha256 }, fh);
      const refusal = refuseRelease(sha, resource, running, this.opts.publicKey);
      if (refusal) throw new Error(refusal);
      await fh.chmod(mode);
      await fh.sync();
    } catch (err) {
      await fh.close();
      await fs.rm(temp, { force: true });
      throw err;
    }
    await fh.close();
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
        deadline: new Date(Date.now() + this.opts.trialMs).toISOString(),
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
