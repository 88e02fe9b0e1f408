// `mesh-host run`: the daemon. Idle while hosted (re-reading the identity every
// interval), then the enrolled host until SIGTERM or SIGINT.
import { setFlagsFromString } from "node:v8";
import { HOST_VERSION } from "../version";
import { Host } from "../host";
import { linkTimeoutMs } from "../link/heartbeat";
import { reconcileTimingFromEnv } from "../reconcile/loop";
import type { Logger } from "../log";
import { Root } from "../resources/root";
import { loadIdentity } from "../state-dir/identity";
import { lockStateDir } from "../state-dir/lock";
import { writeStatusFile } from "../state-dir/status-file";
import { DiskStore } from "../store/disk-store";
import { OWNERSHIP_KEY, parseOwnership } from "../store/ownership";
import { loadHeldDeclaration } from "../state-dir/held-declaration";
import type { CommonOptions } from "./options";
import { runningBinaryPath } from "../self-upgrade/binary-path";
import { RELEASE_PUBLIC_KEY, TEST_BUILD, TEST_BUILD_WARNING } from "../self-upgrade/release-key";
import { SelfUpgrade, trialMsFromEnv } from "../self-upgrade/self-upgrade";
import { UpgradeTrial } from "../self-upgrade/upgrade-trial";
import { binaryIdentity, sameBinary, type BinaryIdentity } from "../self-upgrade/binary-watch";
import { settleAtStart, settleWaitMsFromEnv } from "../self-upgrade/host-package";
import { chrootlessScriptsFromEnv, type PackageContext } from "../resources/package";
import { maxSourceBytes } from "../resources/file-source";
import { ProcessRunner } from "../runner/process-runner";
import { serveControlSocket, type ControlAnswer } from "../state-dir/control-socket";
import { sleep, wakeableSleep } from "../sleep";

export async function runCommand(opts: CommonOptions & { log: Logger }): Promise<number> {
  // The daemon is idle nearly all the time: V8 sized for memory rather than speed keeps a
  // 1,000-file host near 65 MB instead of 80 after each reconcile, at no cost measured here.
  setFlagsFromString("--optimize-for-size");
  // Loud at every start: a test build trusts a release key whose private half is public.
  if (TEST_BUILD) opts.log.warn({ testBuild: true }, TEST_BUILD_WARNING);
  // The environment's settings, read before anything is done: a bad one stops the start, naming it.
  const settings = {
    reconcileTiming: reconcileTimingFromEnv(),
    trialMs: trialMsFromEnv(),
    settleWaitMs: settleWaitMsFromEnv(),
    linkTimeoutMs: linkTimeoutMs(),
  };
  // Read again where sources are fetched; here so that a bad value stops the start, not the first download.
  maxSourceBytes();
  const store = new DiskStore(opts.stateDir);
  await store.init();
  const unlock = await lockStateDir(opts.stateDir);
  try {
    await store.removeLeftovers();
    // Before anything else: a start after a self-upgrade is on trial until the control plane is reached.
    const trial = await UpgradeTrial.begin(store, HOST_VERSION, opts.log);
    // The host's package as the host runs on: dpkg's record put back after a rolled-back package upgrade.
    // Waited for only a little: a hung apt must not keep the host from linking (it goes on in the background).
    const packages = { runner: new ProcessRunner(), root: opts.root, chrootlessScripts: chrootlessScriptsFromEnv(opts.root) };
    const binary = runningBinaryPath();
    const settling = await settleAtStart(store, packages, HOST_VERSION, binary, opts.log, settings.settleWaitMs);
    // Taken after that: from here on a changed binary means a new one to start (but for what the settling reinstalls).
    const startedAs = await binaryIdentity(binary);
    // `mesh-host reconcile` asks the host running now, through the state dir's control socket.
    let current: Host | null = null;
    const control = await serveControlSocket(
      opts.stateDir,
      async (request): Promise<ControlAnswer> => {
        if (!current)
          return {
            ok: false,
            error: "this machine is not enrolled (hosted): there is no declaration to reconcile; `mesh-host apply --file F` reconciles a local one",
          };
        const result = await current.requestReconcile({ reason: request.reason });
        return result.ok ? { ok: true, report: result.report, changes: result.changes.slice(0, 20_000), unchanged: result.unchanged } : result;
      },
      opts.log,
    );
    try {
      const running = { binary, startedAs, packages, settling: settling?.pending ?? null };
      // Once done, the binary its reinstall left is the one started as.
      void settling?.pending.then((identity) => {
        if (identity && running.startedAs) running.startedAs = identity;
        running.settling = null;
      });
      return await daemon(store, opts, settings, trial, (h) => (current = h), running);
    } finally {
      await control.close();
      trial?.stop();
    }
  } finally {
    await unlock();
  }
}

async function daemon(
  store: DiskStore,
  opts: CommonOptions & { log: Logger },
  settings: { reconcileTiming: ReturnType<typeof reconcileTimingFromEnv>; trialMs: number; linkTimeoutMs: number },
  trial: UpgradeTrial | null,
  serving: (host: Host | null) => void,
  running: { binary: string; startedAs: BinaryIdentity | null; packages: PackageContext; settling: Promise<BinaryIdentity | null> | null },
): Promise<number> {
  const { reconcileTiming } = settings;
  let stopping = false;
  let wake: (() => void) | null = null;
  let host: Host | null = null;
  const done = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      opts.log.info({ signal }, "stopping");
      wake?.();
      void (host ? host.stop() : Promise.resolve()).then(resolve, resolve);
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });

  let said = "";
  while (!stopping) {
    const loaded = await loadIdentity(store);
    // A damaged identity on a host that owns resources or holds a declaration is never "hosted":
    // it keeps reconciling without a link until the identity is usable again (re-enrol keeps the store).
    const damaged = loaded.kind === "bad" && (await holdsSomething(store, opts.log)) ? loaded : null;
    if (loaded.kind === "ok" || damaged) {
      const nodeId = loaded.kind === "ok" ? loaded.identity.nodeId : damaged?.identity?.nodeId;
      const log = nodeId ? opts.log.child({ nodeId }) : opts.log;
      host = new Host({
        store,
        root: new Root(opts.root),
        identity: loaded.kind === "ok" ? loaded.identity : null,
        privateKey: loaded.kind === "ok" ? loaded.privateKey : null,
        ...(damaged ? { damaged: damaged.reason } : {}),
        intervalMs: opts.intervalMs,
        linkTimeoutMs: settings.linkTimeoutMs,
        ...reconcileTiming,
        hostVersion: HOST_VERSION,
        log,
        selfUpgrade: new SelfUpgrade({
          store,
          binary: running.binary,
          running: HOST_VERSION,
          trialMs: settings.trialMs,
          publicKey: RELEASE_PUBLIC_KEY,
          log,
          startedAs: running.startedAs,
          packages: running.packages,
          settling: running.settling,
          trial,
        }),
        onLinkUp: () => void trial?.commit().catch((err) => log.error({ reason: String(err) }, "cannot clear the upgrade breadcrumb")),
      });
      await host.start();
      serving(host);
      // With no link there is no control plane to reach: an upgrade on trial is kept as it is.
      if (damaged) await trial?.commit();
      const ended = await Promise.race([
        done.then(() => "stopped" as const),
        host.retired.then(() => "retired" as const),
        host.upgraded.then(() => "upgraded" as const),
        (trial?.rolledBack ?? new Promise<never>(() => undefined)).then(() => "rolled-back" as const),
        ...(damaged ? [identityUsable(store, Math.min(opts.intervalMs, 5_000), () => stopping).then(() => "repaired" as const)] : []),
      ]);
      serving(null);
      if (ended === "upgraded" || ended === "rolled-back") {
        stopping = true;
        await host.stop();
        // Either way the supervisor starts whatever binary is now in place.
        return ended === "upgraded" ? 0 : 1;
      }
      if (ended === "stopped") return 0;
      if (ended === "repaired") {
        opts.log.info({}, "identity usable again: reconnecting");
        await host.stop();
      }
      host = null;
      said = "";
      continue;
    }
    // Hosted: there is no control plane to reach, so an upgrade on trial is kept as it is.
    await trial?.commit();
    // Hosted, nothing to report: a binary replaced on disk (a package upgrade) only needs starting.
    if (!running.settling && running.startedAs && !sameBinary(running.startedAs, await binaryIdentity(running.binary))) {
      opts.log.info({ binary: running.binary }, "host binary replaced on disk; exiting for the supervisor to start it");
      return 0;
    }
    // Hosted: say so once per change, not once per interval.
    const message = loaded.kind === "none" ? "not enrolled (hosted); idle until `mesh-host enrol URL --token T`" : `identity unusable: ${loaded.reason}; idle`;
    if (message !== said) {
      if (loaded.kind === "none") opts.log.info({ stateDir: opts.stateDir }, message);
      else opts.log.error({ stateDir: opts.stateDir }, message);
      said = message;
      await writeStatusFile(store, {
        state: "hosted",
        nodeId: null,
        controlPlaneUrl: null,
        connected: false,
        declarationVersion: 0,
        owned: 0,
        drift: 0,
        errors: 0,
        storeLost: false,
        lastReconcileAt: null,
        lastReconcileResult: null,
        hostVersion: HOST_VERSION.slice(0, 64),
        pid: process.pid,
        updatedAt: new Date().toISOString(),
      }).catch(() => undefined);
    }
    const pause = wakeableSleep(opts.intervalMs);
    wake = pause.wake;
    await pause.done;
    wake = null;
  }
  await done;
  return 0;
}

/** Whether the store owns resources or a declaration is held: then the host is not merely "hosted". */
async function holdsSomething(store: DiskStore, log: Logger): Promise<boolean> {
  const raw = await store.read(OWNERSHIP_KEY).catch(() => null);
  const owned = raw ? parseOwnership(raw) : null;
  if (owned && owned.records.length > 0) return true;
  return (await loadHeldDeclaration(store, log)) !== null;
}

/** Resolves once identity.json and node.key are usable (the operator re-enrolled), checked every `everyMs`. */
async function identityUsable(store: DiskStore, everyMs: number, stopping: () => boolean): Promise<void> {
  while (!stopping()) {
    await sleep(everyMs, { unref: true });
    if ((await loadIdentity(store)).kind === "ok") return;
  }
  return new Promise<void>(() => undefined);
}
