// The apt repository this control plane serves at /apt: rebuilt (never per request) when the set of
// .debs changes by their stat or its signature nears Valid-Until, into a fresh directory that
// replaces the old one whole, so no request sees a half-written index.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../log";
import { buildAptIndex } from "./apt-index";
import { listPool, type PoolDeb } from "./apt-pool";
import { openAptSigningKey, stopGpgAgent, type AptSigningKey } from "./apt-signing-key";
import { missingAptTools, type MissingTools } from "./apt-tools";

export interface AptRepositoryOptions {
  /** MESH_DATA_DIR: the repository keeps apt/gnupg (the key), apt/pool (operators' .debs), apt/builds. */
  dataDir: string;
  /** Where `npm run package` puts the host's .debs. */
  artifactsDir: string;
  /** MESH_APT_SIGNING_KEY_FILE: an armored secret key to sign with instead of one made here. */
  signingKeyFile?: string;
  log: Pick<Logger, "info" | "warn" | "error">;
  /** How often the .debs are looked at again (a directory listing and a stat each); default 2 s. */
  checkIntervalMs?: number;
  /** The Release's Valid-Until is this far ahead; it is re-signed once half has passed. Default 7 days. */
  validForMs?: number;
  now?: () => number;
  /** PATH to find the tools on; default the process's. */
  pathEnv?: string;
}

export interface AptFile {
  file: string;
  /**
   * The file, opened by the lookup: a rebuild may remove its directory at any time after (the build
   * before the current one is kept only until the next), and an open descriptor still reads it whole.
   * The caller closes it (a read stream made from it closes it at its end).
   */
  handle: fs.promises.FileHandle;
  size: number;
  /** A .deb (immutable by name) or an index (changes in place). */
  kind: "deb" | "index" | "key";
}

export interface AptStatus {
  missing: MissingTools;
  /** The .debs it holds (or will once built). */
  debs: string[];
  /** .deb files left out for their names. */
  skipped: string[];
  /** Why the last build failed, while it has not succeeded since. */
  error?: string;
}

export class AptUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AptUnavailableError";
  }
}

interface Snapshot {
  dir: string;
  fingerprint: string;
  builtAt: number;
  files: Map<string, string>;
  debs: PoolDeb[];
}

/**
 * What a path under /apt/ is. A value, not a thrown class: the server entry and Next's bundle of the
 * route each load their own copy of this module, so `instanceof` across them would not hold.
 */
export type AptLookup = { kind: "file"; file: AptFile } | { kind: "none" } | { kind: "unavailable"; message: string };

export interface AptRepository {
  /** The file answering `rel` (a path under /apt/), opened: only paths the index names exist. */
  lookup(rel: string): Promise<AptLookup>;
  /** Builds now if needed (at start, so the first host does not wait for the key). */
  prepare(): Promise<void>;
  status(): AptStatus;
  /** Waits for a build under way (up to `waitMs`) and stops gpg's agent: a stopping control plane leaves no daemon. */
  close(waitMs?: number): Promise<void>;
  readonly poolDir: string;
}

/** What to install when tools are missing, as one sentence. */
export function missingToolsMessage(missing: MissingTools): string {
  return `the apt repository needs ${missing.programs.join(", ")} on the control plane: install them with \`apt-get install ${missing.debianPackages.join(" ")}\` and restart it`;
}

export function createAptRepository(opts: AptRepositoryOptions): AptRepository {
  const aptDir = path.join(opts.dataDir, "apt");
  const poolDir = path.join(aptDir, "pool");
  // Each instance builds under its own directory: two control planes sharing MESH_DATA_DIR (decision
  // 0045) must not remove each other's live build. Another instance's directory is removed only once
  // it has not changed for longer than a signature lasts (its InRelease has expired: nothing serves it).
  const buildsRoot = path.join(aptDir, "builds");
  const buildsDir = path.join(buildsRoot, `${process.pid}-${randomBytes(4).toString("hex")}`);
  const checkIntervalMs = opts.checkIntervalMs ?? 2_000;
  const validForMs = opts.validForMs ?? 7 * 24 * 3600_000;
  const now = opts.now ?? Date.now;
  const sources = () => [opts.artifactsDir, poolDir];

  let snapshot: Snapshot | null = null;
  let checkedAt = -Infinity;
  let building: Promise<Snapshot | null> | null = null;
  let key: AptSigningKey | null = null;
  let failed: { fingerprint: string; message: string; retryAt: number; delayMs: number } | null = null;
  const maxRetryDelayMs = 10 * 60_000;
  let missing: MissingTools = missingAptTools(opts.pathEnv);

  /**
   * Signs from this instance's own copy of the shared GNUPGHOME: another instance sharing MESH_DATA_DIR
   * stops its gpg-agent after each signing, which must not kill this one's mid-sign.
   */
  async function privateSigningHome(shared: AptSigningKey): Promise<AptSigningKey> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-apt-gpg-"));
    fs.chmodSync(home, 0o700);
    fs.cpSync(shared.gnupgHome, home, { recursive: true, filter: (src) => !fs.lstatSync(src).isSocket() && !path.basename(src).startsWith(".#lk") });
    return { ...shared, gnupgHome: home };
  }

  /** Other instances' directories (and .tmp-* left by a crash) untouched for longer than a signature lasts. */
  function removeDeadInstances() {
    let names: string[] = [];
    try {
      names = fs.readdirSync(buildsRoot);
    } catch {
      return;
    }
    for (const name of names) {
      const dir = path.join(buildsRoot, name);
      if (dir === buildsDir) continue;
      try {
        if (now() - fs.statSync(dir).mtimeMs > validForMs) fs.rmSync(dir, { recursive: true, force: true });
      } catch {
        // removed meanwhile by another instance
      }
    }
  }

  async function build(fingerprint: string, debs: PoolDeb[]): Promise<Snapshot> {
    key ??= await privateSigningHome(await openAptSigningKey({ gnupgHome: path.join(aptDir, "gnupg"), keyFile: opts.signingKeyFile }));
    fs.mkdirSync(buildsDir, { recursive: true, mode: 0o700 });
    const tmp = path.join(buildsDir, `.tmp-${randomBytes(6).toString("hex")}`);
    fs.mkdirSync(tmp, { mode: 0o755 });
    const builtAt = now();
    try {
      const index = await buildAptIndex({ dir: tmp, debs, key, validForMs });
      const dir = path.join(buildsDir, `${builtAt}-${randomBytes(4).toString("hex")}`);
      fs.renameSync(tmp, dir);
      const files = new Map([...index.files].map(([rel, file]) => [rel, path.resolve(dir, file)]));
      return { dir, fingerprint, builtAt, files, debs };
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
  }

  /** Keeps the build just replaced (a request may be about to open one of its files) and removes older ones. */
  function removeOldBuilds(keep: string[]) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(buildsDir);
    } catch {
      return;
    }
    for (const name of names) {
      const dir = path.join(buildsDir, name);
      if (!keep.includes(dir)) fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  async function refresh(): Promise<Snapshot | null> {
    missing = missingAptTools(opts.pathEnv);
    if (missing.programs.length > 0) return snapshot;
    const listing = listPool(sources());
    const stale = snapshot && now() - snapshot.builtAt > validForMs / 2;
    if (snapshot && snapshot.fingerprint === listing.fingerprint && !stale) return snapshot;
    // The same set failed before: not again until it changes (a bad .deb must not cost a build per request).
    // Once stale it is retried, but backing off (an unauthenticated request must not cost a build every 2 s).
    if (failed?.fingerprint === listing.fingerprint && (!stale || now() < failed.retryAt)) return snapshot;
    try {
      const previous = snapshot;
      snapshot = await build(listing.fingerprint, listing.debs);
      failed = null;
      removeOldBuilds([snapshot.dir, ...(previous ? [previous.dir] : [])]);
      removeDeadInstances();
      opts.log.info({ debs: listing.debs.length, skipped: listing.skipped.length, dir: snapshot.dir }, "apt repository built");
      if (listing.skipped.length > 0)
        opts.log.warn(
          { skipped: listing.skipped },
          "apt repository: .deb files not named <package>_<version>_<arch>.deb were left out (rename them with dpkg-name)",
        );
    } catch (err) {
      const delayMs = failed?.fingerprint === listing.fingerprint ? Math.min(failed.delayMs * 2, maxRetryDelayMs) : Math.max(checkIntervalMs, 2_000);
      failed = { fingerprint: listing.fingerprint, message: (err as Error).message, retryAt: now() + delayMs, delayMs };
      opts.log.error({ err }, "apt repository build failed");
    }
    return snapshot;
  }

  async function current(): Promise<Snapshot> {
    if (!building && now() - checkedAt >= checkIntervalMs) {
      checkedAt = now();
      building = refresh().finally(() => (building = null));
    }
    const result = building ? await building : snapshot;
    if (missing.programs.length > 0) throw new AptUnavailableError(missingToolsMessage(missing));
    if (!result) throw new AptUnavailableError(`the apt repository could not be built: ${failed?.message ?? "not built yet"}`);
    return result;
  }

  return {
    poolDir,
    async prepare() {
      await current().catch(() => {});
    },
    async lookup(rel) {
      // A file of the snapshot just looked at may be gone by the time it is opened (two rebuilds
      // meanwhile): then it is looked up again in the snapshot that replaced it.
      for (let attempt = 0; ; attempt++) {
        let snap: Snapshot;
        try {
          snap = await current();
        } catch (err) {
          if (err instanceof AptUnavailableError) return { kind: "unavailable", message: err.message };
          throw err;
        }
        const file = snap.files.get(rel);
        if (!file) return { kind: "none" };
        let handle: fs.promises.FileHandle;
        try {
          handle = await fs.promises.open(file, "r");
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT" && attempt < 2 && snapshot !== snap) continue;
          return { kind: "none" };
        }
        try {
          const stat = await handle.stat();
          if (!stat.isFile()) {
            await handle.close();
            return { kind: "none" };
          }
          return { kind: "file", file: { file, handle, size: stat.size, kind: rel === "mesh.gpg" ? "key" : rel.startsWith("pool/") ? "deb" : "index" } };
        } catch {
          await handle.close().catch(() => {});
          return { kind: "none" };
        }
      }
    },
    async close(waitMs = 5_000) {
      if (building) await Promise.race([building.catch(() => {}), new Promise((r) => setTimeout(r, waitMs).unref())]);
      const home = path.join(aptDir, "gnupg");
      if (fs.existsSync(home)) await stopGpgAgent(home);
      if (key) {
        await stopGpgAgent(key.gnupgHome);
        fs.rmSync(key.gnupgHome, { recursive: true, force: true });
        key = null;
      }
    },
    status() {
      const listing = listPool(sources());
      return {
        missing: missingAptTools(opts.pathEnv),
        debs: listing.debs.map((d) => d.name),
        skipped: listing.skipped,
        ...(failed ? { error: failed.message } : {}),
      };
    },
  };
}
