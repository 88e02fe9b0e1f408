// The host's own Debian package (`mesh-host`): what a rolled-back package upgrade leaves to
// settle. The installation's rollback step can only put BINARY.prev back (sh + coreutils), so
// dpkg still names the failed version; the old binary, started again, reinstalls its own
// version (apt from the mesh's repository, or a kept .deb) so dpkg's record is true again.
import { hostRunsPackageVersion, sameDebianVersion } from "@mesh/protocol";
import type { Logger } from "../log";
import { msFromEnv } from "../env-number";
import { systemClock, type Clock } from "../clock";
import { wakeableSleep } from "../sleep";
import { isTransientPackageError, observePackage, restorePackage, type PackageContext } from "../resources/package";
import type { Store } from "../store/store";
import { binaryIdentity, type BinaryIdentity } from "./binary-watch";
import { FAILED_KEY, FailedUpgrade, readJson } from "./upgrade-files";

export const HOST_PACKAGE = "mesh-host";

/**
 * Whether two versions of the host's package are one: "0:1.0" and "1.0" are one Debian version, and
 * a host version is the package version that names it with an epoch or revision ("1.2.3" is "1:1.2.3-1").
 */
export function samePackageVersion(a: string | null | undefined, b: string | null | undefined): boolean {
  if (sameDebianVersion(a, b)) return true;
  return hostRunsPackageVersion(a, b) || hostRunsPackageVersion(b, a);
}

/**
 * What settling did: nothing to do; dpkg's record put back; what could not be done kept as the failed
 * record's `note`; or a failure that passes (dpkg's lock held, the repository unreachable), kept nowhere
 * and said in words for the report, so that the next reconcile tries again.
 */
export type SettleOutcome = "nothing" | "settled" | "noted" | { transient: string };

/**
 * After a rolled-back package upgrade: when dpkg names another version than the one before it,
 * reinstall that one. What could not be done is kept in the failed record (`note`) and so reported
 * with the failure; a failure that passes is not (it would stop every later try); nothing here throws.
 */
export async function settleRolledBackPackage(store: Store, pctx: PackageContext, running: string, log: Logger): Promise<SettleOutcome> {
  const failed = await readJson(store, FAILED_KEY, FailedUpgrade);
  if (!failed?.package || failed.note) return "nothing";
  // Only the binary the rollback put back settles dpkg's record. The record stays after it is settled
  // (until a later trial commits): a later version running now, or the failed one restarted after a
  // crash between the record's write and the rename back, must not downgrade the package under itself.
  if (!samePackageVersion(failed.from, running)) return "nothing";
  const { name, previous } = failed.package;
  let note: string;
  try {
    const now = await observePackage(pctx, name);
    // dpkg's exact version from before the upgrade (the breadcrumb's), installed as it was: epoch and
    // revision included, never a version rebuilt from the host's. A record that names only the host
    // version (written before the exact one was kept) is satisfied by any package version of it.
    const exact = previous !== failed.from;
    const back = exact ? sameDebianVersion(now.version, previous) : samePackageVersion(now.version, running);
    if (now.installed && back) return "nothing";
    const outcome = await restorePackage(pctx, { name, installed: true, version: previous, status: "install ok installed", deb: null });
    if (outcome.outcome !== "approximate") {
      log.info({ name, version: previous, detail: outcome.detail }, "package upgrade rolled back: dpkg's record is the previous version again");
      return "settled";
    }
    note = outcome.detail;
  } catch (err) {
    if (isTransientPackageError(err)) {
      const reason = (err as Error).message;
      log.warn({ name, reason }, "cannot put the previous package version back in dpkg's record yet; tried again at the next reconcile");
      return { transient: `${name} ${failed.to} was rolled back, but dpkg's record is not yet back to ${previous} (tried again): ${reason}`.slice(0, 1024) };
    }
    note = (err as Error).message;
  }
  note = `the previous binary runs, but dpkg still records ${name} ${failed.to} (\`dpkg -V ${name}\` says so): ${note}`.slice(0, 512);
  log.error({ name, note }, "cannot put the previous package version back in dpkg's record");
  await store.write(FAILED_KEY, JSON.stringify({ ...failed, note }));
  return "noted";
}

/** How long a start waits for dpkg's record to be put back before it goes on without it (MESH_SETTLE_WAIT_MS). */
export const DEFAULT_SETTLE_WAIT_MS = 10_000;

/** MESH_SETTLE_WAIT_MS, read once at start: 0 (do not wait) or more; anything else is refused, naming it. */
export function settleWaitMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return msFromEnv(env, "MESH_SETTLE_WAIT_MS", DEFAULT_SETTLE_WAIT_MS, { min: 0 });
}

/**
 * settleRolledBackPackage at the start, off its path: waited for at most `waitMs`, so that an apt
 * that hangs (a dead mirror, a held lock) never keeps the host from linking. Null when it finished
 * in time; otherwise it goes on in the background, and `pending` resolves, once it is done, with
 * the binary as its reinstall left it (the same version, so no new binary to start).
 */
export async function settleAtStart(
  store: Store,
  pctx: PackageContext,
  running: string,
  binary: string,
  log: Logger,
  waitMs: number,
  clock: Clock = systemClock,
): Promise<{ pending: Promise<BinaryIdentity | null> } | null> {
  const settling = settleRolledBackPackage(store, pctx, running, log).catch((err: unknown) =>
    log.error({ reason: (err as Error).message }, "cannot settle dpkg's record after a rolled-back package upgrade"),
  );
  // The wait is a sleep on the agent's clock (decision 0050), woken as soon as the settling is done.
  const wait = wakeableSleep(waitMs, { clock });
  const inTime = await Promise.race([settling.then(() => true), wait.done.then(() => false)]);
  wait.wake();
  if (inTime) return null;
  log.warn({ waitedMs: waitMs }, "still putting the previous package version back in dpkg's record; starting without waiting for it");
  return { pending: settling.then(() => binaryIdentity(binary)) };
}
