// A freshly upgraded binary is on trial until it reaches the control plane: then the
// upgrade is kept; past the deadline it puts `.prev` back, records why, and exits.
import { promises as fs } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "../log";
import { syncDir } from "../fs/atomic-file";
import type { Store } from "../store/store";
import { isoNow, systemClock, type Clock } from "../clock";
import { BREADCRUMB_KEY, Breadcrumb, EXITED_KEY, FAILED_KEY, readJson, type FailedUpgrade } from "./upgrade-files";

export class UpgradeTrial {
  private timer: unknown = null;
  private done = false;
  /**
   * Set (synchronously, before `.prev` is renamed back) once the trial failed: the binary that then
   * appears at the path is the previous one put back, not a new one to start (SelfUpgrade.replacedOnDisk).
   */
  rollingBack = false;
  private onRolledBack: (() => void) | null = null;
  /** Resolves when the trial failed and the old binary is back in place: the daemon exits for it to start. */
  readonly rolledBack = new Promise<void>((resolve) => (this.onRolledBack = resolve));

  private constructor(
    private readonly store: Store,
    private readonly crumb: Breadcrumb,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  /** The trial this start is, or null: no breadcrumb, or one this binary is not the subject of (cleared). */
  static async begin(store: Store, running: string, log: Logger, clock: Clock = systemClock): Promise<UpgradeTrial | null> {
    let crumb = await readJson(store, BREADCRUMB_KEY, Breadcrumb);
    if (!crumb) {
      // An unreadable breadcrumb or a marker alone is of no upgrade in progress.
      await store.remove(BREADCRUMB_KEY);
      await store.remove(EXITED_KEY);
      return null;
    }
    // A package's breadcrumb is written before dpkg runs and names dpkg's version (or none yet):
    // the binary it put there is on trial whenever it is no longer the one that wrote it.
    const subject = crumb.package ? crumb.from !== running : crumb.to === running;
    if (!subject) {
      // The rename never happened, or dpkg never replaced the binary (the old binary died before): nothing is on trial.
      log.warn({ from: crumb.from, to: crumb.to, running }, "an upgrade did not take place; the declaration will ask for it again");
      await store.remove(BREADCRUMB_KEY);
      await store.remove(EXITED_KEY);
      return null;
    }
    if (crumb.to !== running && crumb.package) {
      // Killed between dpkg and its report: the version on trial is the one now running (a
      // failure is then recorded under it, by this binary or the installation's rollback step).
      crumb = { ...crumb, to: running };
      await store.write(BREADCRUMB_KEY, JSON.stringify(crumb));
    }
    const trial = new UpgradeTrial(store, crumb, log, clock);
    const deadline = Math.max(Date.parse(crumb.deadline), clock.now() + crumb.trialMs);
    log.info({ from: crumb.from, to: crumb.to, deadline: new Date(deadline).toISOString() }, "upgraded: on trial until the control plane is reached");
    trial.timer = clock.setTimeout(
      () => void trial.rollBack(`mesh-host ${crumb.to} did not reach the control plane within ${Math.round(crumb.trialMs / 1000)} s`),
      deadline - clock.now(),
    );
    return trial;
  }

  /** Still on trial: neither kept (the control plane reached) nor rolled back. */
  get active(): boolean {
    return !this.done;
  }

  /** The upgrade on trial. */
  get upgrade(): { from: string; to: string } {
    return { from: this.crumb.from, to: this.crumb.to };
  }

  /**
   * A newer binary replaced the one on trial (an operator's apt upgrade during the trial): this trial
   * ends with neither a commit nor a rollback; the newer binary's breadcrumb, written next, takes over.
   */
  supersede(): void {
    if (this.done) return;
    this.done = true;
    this.clock.clearTimeout(this.timer);
    this.log.info({ from: this.crumb.from, to: this.crumb.to }, "the binary on trial was replaced by a newer one; its trial ends, the newer one's begins");
  }

  /** Reached the control plane (or has none to reach): the upgrade stays. */
  async commit(): Promise<void> {
    if (this.done) return;
    this.done = true;
    this.clock.clearTimeout(this.timer);
    await this.store.remove(BREADCRUMB_KEY);
    await this.store.remove(EXITED_KEY);
    await this.store.remove(FAILED_KEY);
    this.log.info({ from: this.crumb.from, to: this.crumb.to }, "upgrade kept: the control plane was reached");
  }

  stop(): void {
    this.clock.clearTimeout(this.timer);
  }

  async rollBack(reason: string): Promise<void> {
    if (this.done) return;
    this.done = true;
    this.rollingBack = true;
    const { binary } = this.crumb;
    // Why, first (the store writes atomically), then the rename: a crash between the two leaves the
    // record beside the new binary, never the previous binary back with no word of why (it would
    // take the breadcrumb for an upgrade that did not happen, and try the same release again).
    // A record that cannot be written (a full disk) never keeps the previous binary from coming back:
    // the rename needs no space, and a failed binary left in place would fail at every start.
    const failed: FailedUpgrade = { ...this.crumb, reason, at: isoNow(this.clock) };
    await this.store
      .write(FAILED_KEY, JSON.stringify(failed))
      .catch((err: unknown) =>
        this.log.error({ reason: (err as Error).message }, "cannot record why the upgrade failed; putting the previous binary back anyway"),
      );
    try {
      await fs.rename(`${binary}.prev`, binary);
      await syncDir(dirname(binary));
    } catch (err) {
      this.log.error({ binary, reason: (err as Error).message }, "cannot put the previous binary back; the installation's rollback step is the last resort");
    }
    await this.store.remove(BREADCRUMB_KEY);
    await this.store.remove(EXITED_KEY);
    this.log.error(
      { from: this.crumb.from, to: this.crumb.to, reason },
      "upgrade rolled back: the previous binary is back; exiting for the supervisor to start it",
    );
    this.onRolledBack?.();
  }
}
