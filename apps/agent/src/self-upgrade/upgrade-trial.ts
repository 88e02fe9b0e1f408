// A freshly upgraded binary is on trial until it reaches the control plane: then the
// upgrade is kept; past the deadline it puts `.prev` back, records why, and exits.
import { promises as fs } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "../log";
import { syncDir } from "../fs/atomic-file";
import type { Store } from "../store/store";
import { BREADCRUMB_KEY, Breadcrumb, EXITED_KEY, FAILED_KEY, readJson, type FailedUpgrade } from "./upgrade-files";

export class UpgradeTrial {
  private timer: NodeJS.Timeout | null = null;
  private done = false;
  private onRolledBack: (() => void) | null = null;
  /** Resolves when the trial failed and the old binary is back in place: the daemon exits for it to start. */
  readonly rolledBack = new Promise<void>((resolve) => (this.onRolledBack = resolve));

  private constructor(
    private readonly store: Store,
    private readonly crumb: Breadcrumb,
    private readonly log: Logger,
  ) {}

  /** The trial this start is, or null: no breadcrumb, or one this binary is not the subject of (cleared). */
  static async begin(store: Store, running: string, log: Logger): Promise<UpgradeTrial | null> {
    const crumb = await readJson(store, BREADCRUMB_KEY, Breadcrumb);
    if (!crumb) {
      // An unreadable breadcrumb or a marker alone is of no upgrade in progress.
      await store.remove(BREADCRUMB_KEY);
      await store.remove(EXITED_KEY);
      return null;
    }
    if (crumb.to !== running) {
      // The rename never happened (the old binary died before it): nothing is on trial.
      log.warn({ from: crumb.from, to: crumb.to, running }, "an upgrade did not take place; the declaration will ask for it again");
      await store.remove(BREADCRUMB_KEY);
      await store.remove(EXITED_KEY);
      return null;
    }
    const trial = new UpgradeTrial(store, crumb, log);
    const deadline = Math.max(Date.parse(crumb.deadline), Date.now() + crumb.trialMs);
    log.info({ from: crumb.from, to: crumb.to, deadline: new Date(deadline).toISOString() }, "upgraded: on trial until the control plane is reached");
    trial.timer = setTimeout(
      () => void trial.rollBack(`mesh-host ${crumb.to} did not reach the control plane within ${Math.round(crumb.trialMs / 1000)} s`),
      deadline - Date.now(),
    );
    return trial;
  }

  /** Reached the control plane (or has none to reach): the upgrade stays. */
  async commit(): Promise<void> {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    await this.store.remove(BREADCRUMB_KEY);
    await this.store.remove(EXITED_KEY);
    await this.store.remove(FAILED_KEY);
    this.log.info({ from: this.crumb.from, to: this.crumb.to }, "upgrade kept: the control plane was reached");
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  async rollBack(reason: string): Promise<void> {
    if (this.done) return;
    this.done = true;
    const { binary } = this.crumb;
    try {
      await fs.rename(`${binary}.prev`, binary);
      await syncDir(dirname(binary));
    } catch (err) {
      this.log.error({ binary, reason: (err as Error).message }, "cannot put the previous binary back; the installation's rollback step is the last resort");
    }
    const failed: FailedUpgrade = { ...this.crumb, reason, at: new Date().toISOString() };
    await this.store.write(FAILED_KEY, JSON.stringify(failed));
    await this.store.remove(BREADCRUMB_KEY);
    await this.store.remove(EXITED_KEY);
    this.log.error(
      { from: this.crumb.from, to: this.crumb.to, reason },
      "upgrade rolled back: the previous binary is back; exiting for the supervisor to start it",
    );
    this.onRolledBack?.();
  }
}
