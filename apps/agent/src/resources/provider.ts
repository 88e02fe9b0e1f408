// The interface every resource type implements, keyed by subject (a path, a
// package name, a unit): observe, apply, remove, and snapshot/restore for adoption.
import type { Resource, ResourceType } from "@mesh/protocol";
import type { SourceFetcher } from "./file-source";
import type { SourceCache } from "./source-cache";
import type { Runner } from "../runner/runner";
import type { SelfUpgrade } from "../self-upgrade/self-upgrade";
import type { Original } from "../store/original";
import type { Accounts } from "./accounts";
import type { OriginalBlobs } from "./original-blobs";
import type { State } from "./observed";
import type { Root } from "./root";
import type { SafePaths } from "./safe-path";
import type { ServiceManager } from "./service-manager";
import type { Clock } from "../clock";

/** How a removal or a restore ended; `kept` is not a failure of the host but is reported. */
export type RemoveOutcome =
  | { kind: "removed" }
  | { kind: "restored"; note?: string }
  | { kind: "absent" }
  | { kind: "kept"; reason: string }
  /** Left on the machine as it is, no longer the host's (the host's own package): `note` says why. */
  | { kind: "released"; note: string };

/** What the machine offers the providers; one per reconcile. */
export interface ProviderContext {
  root: Root;
  /**
   * The host path of a declared path: /proc/self/fd/N/name, N its parent directory reached safely
   * from the root (safe-path.ts). Throws when it escapes, crosses an unsafe symlink, or (ENOENT) a parent is missing.
   */
  hostPath(path: string): Promise<string>;
  /** The directory descriptors behind `hostPath`, open until the reconcile ends. */
  paths: SafePaths;
  accounts: Accounts;
  originals: OriginalBlobs;
  /** Streams a source's bytes into an open file, capped and checked against its sha256 (file-source.ts). */
  fetchSource: SourceFetcher;
  /** Where sources are downloaded ahead of the apply, several at once (source-cache.ts); null: each is fetched when applied. */
  sources: SourceCache | null;
  /** Paths declared or owned: a purging directory leaves these (and their ancestors) alone. */
  managedPaths: ReadonlySet<string>;
  /** Every program the providers run goes through this (argv, no shell, timeout). */
  runner: Runner;
  /** The host's clock, for waits inside a step (dpkg's locks). */
  clock: Clock;
  /** Puts a verified release over the running binary; null where the host cannot upgrade itself (tests, a source run without a state dir). */
  selfUpgrade: SelfUpgrade | null;
  /** What runs services here, chosen once: systemd where it is PID 1, else the host's own supervisor. */
  serviceManager(): Promise<ServiceManager>;
  /**
   * A directory whose entries changed (a rename, mkdir, unlink): fsynced once, by
   * `syncPending`, before the results of the changes are recorded. One fsync per
   * directory per window instead of one per file.
   */
  syncLater(dir: string): void;
  syncPending(): Promise<void>;
}

export interface ResourceProvider<R extends Resource = Resource> {
  readonly type: ResourceType;
  /**
   * Whether apply moves the subject from old to new in one step (temp + rename):
   * then an interrupted create that left something else there was not the host's doing.
   */
  readonly atomic: boolean;
  /** The state a resource declares, comparable (after `project`) with `observe`. */
  declared(resource: R): State;
  /**
   * Whether an observed state is something that stands there (then it is adopted,
   * with a snapshot) rather than an absence. Path providers observe absence as null;
   * a package observes "not installed" as a state. Default: every state exists.
   */
  exists?(observed: State): boolean;
  /** A one-line drift description in the type's own words; the generic one otherwise. */
  describe?(resource: R, observed: State | null): string | null;
  /** Once per reconcile, before any subject of this type is observed: repairs; returns what to report. */
  prepare?(ctx: ProviderContext): Promise<string[]>;
  /**
   * What stands at the subject now, or null. `key` is the subject without its
   * kind ("/etc/motd", "curl"); `resource` is given when it is still declared.
   */
  observe(key: string, resource: R | null, ctx: ProviderContext): Promise<State | null>;
  /** Bring the subject to `resource`; `observed` is what stands there now. Throws on failure. */
  apply(resource: R, observed: State | null, ctx: ProviderContext): Promise<void>;
  /**
   * Take away what the host made at `key`, never anything it does not own.
   * `applied` is the digest of the declared state the host last applied there.
   */
  remove(key: string, ctx: ProviderContext, applied: string): Promise<RemoveOutcome>;
  /** Keep what stands at `key` before the host first changes it, so that leaving restores it. */
  snapshot(key: string, observed: State, ctx: ProviderContext): Promise<Original>;
  /** Put back what `snapshot` kept. */
  restore(key: string, original: Original, ctx: ProviderContext): Promise<RemoveOutcome>;
  /** Clear what an interrupted apply may have left beside the subject (a temp file). */
  settle?(key: string, ctx: ProviderContext): Promise<void>;
}
