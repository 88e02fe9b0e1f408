// One level-based reconcile: read the store, resolve open intents, observe, plan,
// apply in windows (intents written before each window's changes, results after), then report.
import { LIMITS, type Declaration, type Report, type Resource, type ResourceError } from "@mesh/protocol";
import type { Logger } from "../log";
import type { ControlPlaneAccess } from "../resources/file-source";
import type { Root } from "../resources/root";
import { ProcessRunner } from "../runner/process-runner";
import type { Runner } from "../runner/runner";
import type { SelfUpgrade } from "../self-upgrade/self-upgrade";
import { loadOwnership, saveOwnership } from "../store/ownership";
import type { Store } from "../store/store";
import { DiskStore } from "../store/disk-store";
import { join } from "node:path";
import { providerContext } from "./provider-context";
import { Run, type Change } from "./run";
import { STATE_DIR_NAMES } from "../state-dir/keys";
import { systemClock, type Clock } from "../clock";

export type { Change, ChangeKind } from "./run";

export interface ReconcileDeps {
  store: Store;
  root: Root;
  log: Logger;
  /** Whether the host is enrolled: then a missing store means a lost one. */
  enrolled: boolean;
  /** Where `source` URLs are fetched from, signed by the node key; null when not enrolled. */
  controlPlane?: ControlPlaneAccess | null;
  /** Runs dpkg, apt-get and systemctl; the real one on child_process by default. */
  runner?: Runner;
  /** Whether systemd is PID 1; found from /proc/1/comm unless a test says so. */
  systemdIsPid1?: boolean;
  /** argv that runs mesh-host, for the host's own service supervisor; this process's own by default. */
  hostCommand?: string[];
  /** When records are dated; the clock's time by default. */
  now?: () => Date;
  /** The host's clock: the records' dates and the waits inside a step (dpkg's locks); the system's by default. */
  clock?: Clock;
  /** How a `host` resource is applied; without it one fails with a clear error. */
  selfUpgrade?: SelfUpgrade | null;
  /** Where sources are downloaded ahead of the apply; `downloads/` in a disk store's state dir by default. */
  downloadsDir?: string | null;
  /**
   * Aborts the run (the loop's deadline): no step starts after it, the changes made are recorded,
   * and the reconcile throws the signal's reason. A step under way finishes first (the Runner bounds each program).
   */
  signal?: AbortSignal;
}

export interface ReconcileInput {
  /** The declaration to reach; null observes and reports only (nothing held yet). */
  declaration: Declaration | null;
  /** Errors that belong in this report but not to a resource step (a rejected declaration). */
  extraErrors?: ResourceError[];
  rejectedVersion?: number;
  /** The control plane acknowledged a report saying the store was lost: stop saying it. */
  clearLost?: boolean;
  /** The newest store generation known to be acknowledged or seen: a store older than it was rolled back. */
  acknowledgedGeneration?: number;
  /** The control plane found the store older than the one it stored: lost, whatever its generation now. */
  storeRolledBack?: boolean;
  /** Retired with keepResources: drop ownership, leave the machine as it is. */
  forget?: boolean;
  /** Reconcile now: `onDrift: report` resources corrected once, and resources whose drift is accepted as observed. */
  correct?: ReadonlySet<string>;
  accept?: ReadonlySet<string>;
}

export interface ReconcileOutcome {
  report: Report;
  /** The store's generation as read (or made again, when lost) before this reconcile wrote it. */
  loadedGeneration: number;
  /** This reconcile found the store lost (missing, unreadable or rolled back). */
  lostNow: boolean;
  changes: Change[];
  unchanged: number;
  /** What the store records after this reconcile, by subject (`path:/etc/x`): what the drift watch follows. */
  subjects: string[];
}

function declaredSources(resources: readonly Resource[]): string[] {
  return resources.flatMap((r) => ("source" in r && r.source ? [r.source.sha256] : []));
}

export async function reconcile(deps: ReconcileDeps, input: ReconcileInput): Promise<ReconcileOutcome> {
  const now = deps.now ?? (() => new Date((deps.clock ?? systemClock).now()));
  const loaded = await loadOwnership(deps.store, {
    enrolled: deps.enrolled,
    now: now(),
    acknowledged: input.acknowledgedGeneration,
    rolledBack: input.storeRolledBack,
  });
  if (loaded.rolledBack) {
    deps.log.warn(
      { keptAs: loaded.keptAs, ...loaded.rolledBack },
      "store lost: it is older than the generation acknowledged (rolled back); what it does not list can no longer be removed",
    );
  } else if (loaded.lostNow) deps.log.warn({ keptAs: loaded.keptAs }, "store lost: what was owned before can no longer be removed");
  const ownership = loaded.ownership;
  const loadedGeneration = ownership.generation ?? 0;
  if (input.forget && ownership.records.length > 0) {
    ownership.records.length = 0;
    await saveOwnership(deps.store, ownership);
  }
  if (input.clearLost && !loaded.lostNow && ownership.lostAt) {
    delete ownership.lostAt;
    await saveOwnership(deps.store, ownership);
  }
  const resources = input.declaration?.resources ?? [];
  const ctx = providerContext({
    root: deps.root,
    store: deps.store,
    controlPlane: deps.controlPlane ?? null,
    resources,
    records: ownership.records,
    runner: deps.runner ?? new ProcessRunner(),
    systemdIsPid1: deps.systemdIsPid1,
    hostCommand: deps.hostCommand,
    selfUpgrade: deps.selfUpgrade ?? null,
    ...(deps.clock ? { clock: deps.clock } : {}),
    downloadsDir:
      deps.downloadsDir !== undefined ? deps.downloadsDir : deps.store instanceof DiskStore ? join(deps.store.dir, STATE_DIR_NAMES.downloads) : null,
  });
  const run = new Run(deps, ownership, ctx);
  let owned;
  try {
    await run.prepareTypes([...resources.map((r) => r.type), ...ownership.records.map((r) => r.type)]);
    deps.signal?.throwIfAborted();
    await run.resolveOpenIntents();
    deps.signal?.throwIfAborted();
    if (input.declaration) await run.apply(input.declaration, { correct: input.correct, accept: input.accept });
    owned = await run.owned(input.declaration);
  } finally {
    // Every /proc/self/fd path handed out this reconcile is dead from here.
    ctx.paths.close();
    // A partial download of a source still declared is resumed next time; nothing else is kept.
    await ctx.sources?.settle(declaredSources(resources)).catch((err) => deps.log.warn({ err: String(err) }, "could not clear downloaded sources"));
  }
  const report: Report = {
    declarationVersion: input.declaration?.version ?? 0,
    ...(input.rejectedVersion !== undefined ? { rejectedVersion: input.rejectedVersion } : {}),
    owned: owned.slice(0, LIMITS.resources),
    drift: run.drift.slice(0, LIMITS.resources),
    errors: [...(input.extraErrors ?? []), ...run.errors].slice(0, LIMITS.reportErrors),
    skipped: run.skipped.slice(0, LIMITS.resources),
    storeLost: ownership.lostAt !== undefined,
    storeGeneration: ownership.generation ?? 0,
    reconciledAt: now().toISOString(),
  };
  const subjects = ownership.records.map((r) => r.subject);
  return { report, changes: run.changes, unchanged: run.unchanged, loadedGeneration, lostNow: loaded.lostNow, subjects };
}
