// The per-reconcile context the providers work in: host paths reached safely through descriptors,
// accounts read once, original blobs in the store, sources from the control plane.
import type { Resource } from "@mesh/protocol";
import { resourceSubject } from "@mesh/protocol";
import { Accounts } from "../resources/accounts";
import { syncDir } from "../fs/atomic-file";
import { maxSourceBytes, sourceFetcher, sourceOpener, type ControlPlaneAccess } from "../resources/file-source";
import { SourceCache } from "../resources/source-cache";
import { OriginalBlobs } from "../resources/original-blobs";
import type { ProviderContext } from "../resources/provider";
import type { Root } from "../resources/root";
import { SafePaths } from "../resources/safe-path";
import { systemdIsPid1 } from "../resources/service";
import { systemdManager, type ServiceManager } from "../resources/service-manager";
import { hostCommand } from "../self-upgrade/binary-path";
import { supervisedManager } from "../supervisor/supervised-manager";
import type { Runner } from "../runner/runner";
import type { SelfUpgrade } from "../self-upgrade/self-upgrade";
import type { OwnedRecord } from "../store/ownership";
import type { Store } from "../store/store";
import { systemClock, type Clock } from "../clock";

export function providerContext(opts: {
  root: Root;
  store: Store;
  controlPlane: ControlPlaneAccess | null;
  resources: readonly Resource[];
  records: readonly OwnedRecord[];
  runner: Runner;
  systemdIsPid1?: boolean;
  /** argv that runs mesh-host, for the host's own supervisor; this process's own command by default. */
  hostCommand?: string[];
  selfUpgrade?: SelfUpgrade | null;
  /** A folder for sources downloaded ahead of the apply (resumable); without one each is fetched as it is applied. */
  downloadsDir?: string | null;
  /** The host's clock (the system's by default). */
  clock?: Clock;
}): ProviderContext {
  const paths = new SafePaths(opts.root.dir);
  let manager: Promise<ServiceManager> | null = null;
  const unsynced = new Set<string>();
  const sources = opts.downloadsDir ? new SourceCache(opts.downloadsDir, sourceOpener(opts.controlPlane), maxSourceBytes()) : null;
  return {
    root: opts.root,
    hostPath: (path) => paths.hostPath(path),
    paths,
    accounts: new Accounts(opts.root.dir, opts.runner),
    originals: new OriginalBlobs(opts.store),
    fetchSource: sources ? sources.fetcher() : sourceFetcher(opts.controlPlane),
    sources,
    managedPaths: managedPaths([...opts.resources.map(resourceSubject), ...opts.records.map((r) => r.subject)]),
    runner: opts.runner,
    clock: opts.clock ?? systemClock,
    selfUpgrade: opts.selfUpgrade ?? null,
    syncLater: (dir) => void unsynced.add(dir),
    async syncPending() {
      const dirs = [...unsynced];
      unsynced.clear();
      // A directory removed since its entry changed has nothing left to make durable.
      for (const dir of dirs) await syncDir(dir).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? undefined : Promise.reject(err)));
    },
    serviceManager: () =>
      (manager ??= (async () =>
        (opts.systemdIsPid1 ?? managerChosen() ?? (await systemdIsPid1()))
          ? systemdManager(opts.runner, opts.root.dir)
          : supervisedManager({ rootDir: opts.root.dir, command: () => opts.hostCommand ?? hostCommand() }))()),
  };
}

/**
 * MESH_SERVICE_MANAGER=systemd or mesh-host overrides the choice made from PID 1 (true means
 * systemd); unset or "auto" leaves it to PID 1. Anything else fails each service resource, clearly.
 */
function managerChosen(env: NodeJS.ProcessEnv = process.env): boolean | undefined {
  const v = env.MESH_SERVICE_MANAGER;
  if (v === undefined || v === "" || v === "auto") return undefined;
  if (v === "systemd") return true;
  if (v === "mesh-host") return false;
  throw new Error(`MESH_SERVICE_MANAGER=${v}: expected systemd, mesh-host or auto`);
}

/** Every managed path and each of its ancestors: what a purging directory must leave. */
function managedPaths(subjects: string[]): Set<string> {
  const out = new Set<string>();
  for (const s of subjects) {
    if (!s.startsWith("path:")) continue;
    const path = s.slice(5);
    for (let i = path.length; i > 0; i = path.lastIndexOf("/", i - 1)) {
      const p = path.slice(0, i);
      if (out.has(p)) break;
      out.add(p);
    }
  }
  return out;
}
