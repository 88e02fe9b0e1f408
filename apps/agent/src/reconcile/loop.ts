// The reconcile loop: triggers (start, declaration, timer, reconnect) feed one run at a time;
// triggers that arrive during a run coalesce into one more run. A run that failed is tried again
// by a backoff (exponential with jitter, capped, reset by a run that did not fail), not left to
// the interval; a run that goes past its deadline is aborted (decision 0050).
import type { Logger } from "../log";
import { HostError, reasonOf } from "../host-error";
import { msFromEnv } from "../env-number";
import { systemClock, unref, type Clock } from "../clock";

/**
 * `retry`: a run failed, or a write of the host's own state did; `store`: the control plane holds a newer
 * store generation; `watch`: an owned path changed (drift-watch.ts); `request`: reconcile now, over the link or the local socket.
 */
export type Trigger = "start" | "declaration" | "timer" | "reconnect" | "rejected" | "retry" | "store" | "watch" | "request";

/**
 * What a run says of itself: "failed" (it could not finish; a run that throws failed too) has the loop try
 * again by the backoff, capped at `capMs`; "errors" (it finished, some resources failed) is tried again by
 * the same backoff capped at the interval instead: a passing fault (a mirror down, a lock held) is retried
 * within seconds, one that stays costs no more than the timer does.
 */
export type RunResult = "ok" | "errors" | "failed";

/** When a failed run is tried again: the first retry after about `baseMs`, doubling per failure up to `capMs`. */
export interface RetryTiming {
  baseMs: number;
  capMs: number;
}

/** A host whose runs keep failing tries about once a minute: soon back once the cause clears, one failure report a minute. */
export const DEFAULT_RETRY: RetryTiming = { baseMs: 1_000, capMs: 60_000 };
/** Longer than any run that works: four windows of package installs at the Runner's 15-minute bound. */
export const DEFAULT_DEADLINE_MS = 60 * 60_000;

/**
 * The retry and the deadline as the environment sets them (as MESH_LINK_TIMEOUT_MS and MESH_UPGRADE_TRIAL_MS
 * set theirs): MESH_RECONCILE_RETRY_BASE_MS, MESH_RECONCILE_RETRY_CAP_MS, MESH_RECONCILE_DEADLINE_MS, each
 * a whole number of milliseconds; unset or empty: the default. A value that is not one is refused, naming it (env-number.ts).
 */
export function reconcileTimingFromEnv(env: NodeJS.ProcessEnv = process.env): { reconcileRetry: RetryTiming; reconcileDeadlineMs: number } {
  const read = (name: string, fallback: number): number => msFromEnv(env, name, fallback);
  const baseMs = read("MESH_RECONCILE_RETRY_BASE_MS", DEFAULT_RETRY.baseMs);
  const capMs = read("MESH_RECONCILE_RETRY_CAP_MS", Math.max(DEFAULT_RETRY.capMs, baseMs));
  if (capMs < baseMs) throw new HostError("usage", `MESH_RECONCILE_RETRY_CAP_MS=${capMs}: must be at least MESH_RECONCILE_RETRY_BASE_MS (${baseMs})`);
  return { reconcileRetry: { baseMs, capMs }, reconcileDeadlineMs: read("MESH_RECONCILE_DEADLINE_MS", DEFAULT_DEADLINE_MS) };
}

export interface LoopOptions {
  intervalMs: number;
  log: Logger;
  clock?: Clock;
  retry?: RetryTiming;
  /** A run still going after this long is aborted (its signal) and counts as failed. */
  deadlineMs?: number;
  /** For the jitter; Math.random by default. */
  random?: () => number;
}

/** Why a run was aborted at its deadline: the signal's reason, and the error the run ends with. */
export class DeadlineExceeded extends Error {
  constructor(readonly deadlineMs: number) {
    super(`the reconcile ran past its deadline of ${formatMs(deadlineMs)} and was aborted`);
    this.name = "DeadlineExceeded";
  }
}

/**
 * The wait before the next try after `failures` failed runs in a row (1 for the first): a ceiling of
 * `baseMs * 2^(failures-1)`, capped at `capMs`, and a delay drawn in [ceiling/2, ceiling) ("equal
 * jitter"): spread, so a fleet that failed together does not retry together, yet never near zero.
 */
export function retryDelay(failures: number, timing: RetryTiming, random: () => number = Math.random): number {
  const ceiling = retryCeiling(failures, timing);
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

/** The top of the window the wait after `failures` failed runs is drawn from. */
export function retryCeiling(failures: number, timing: RetryTiming): number {
  return Math.min(timing.capMs, timing.baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 40));
}

export class ReconcileLoop {
  private running: Promise<void> | null = null;
  private again = new Set<Trigger>();
  private timer: unknown = null;
  private retryTimer: unknown = null;
  private failures = 0;
  /** The last run in the count finished with resource errors only: retries are capped at the interval. */
  private onlyResourceErrors = false;
  private stopped = false;
  /** No retry is armed any more (the host is stopping): what is running finishes, the timer and triggers still run. */
  private retriesHeld = false;
  private readonly clock: Clock;
  private readonly retry: RetryTiming;

  constructor(
    private readonly run: (triggers: Trigger[], signal: AbortSignal) => Promise<RunResult | undefined>,
    private readonly opts: LoopOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.retry = opts.retry ?? DEFAULT_RETRY;
    if (!(this.retry.baseMs > 0) || !(this.retry.capMs >= this.retry.baseMs))
      throw new Error(`reconcile retry: base ${this.retry.baseMs} ms and cap ${this.retry.capMs} ms must be positive, the cap at least the base`);
  }

  start(): void {
    this.armTimer();
    this.trigger("start");
  }

  trigger(reason: Trigger): void {
    if (this.stopped) return;
    this.again.add(reason);
    if (!this.running) this.running = this.drain();
  }

  /**
   * Something failed outside a run (a write of the host's own state): a run is tried again by the
   * backoff, unless one is already due.
   */
  retryLater(): void {
    if (this.stopped || this.retryTimer !== null) return;
    this.failures++;
    this.onlyResourceErrors = false;
    this.armRetry();
  }

  /** Cancels a pending retry and arms none from here on: the host is stopping, and a retry would only delay it. */
  holdRetries(): void {
    this.retriesHeld = true;
    this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  /** Failed runs in a row (and failures outside runs) since the last run that did not fail. */
  get failuresInARow(): number {
    return this.failures;
  }

  /** Resolves once no run is in progress and none is queued. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    this.clock.clearTimeout(this.retryTimer);
    this.timer = null;
    this.retryTimer = null;
    this.again.clear();
    await this.idle();
  }

  private armTimer(): void {
    this.timer = this.clock.setTimeout(() => {
      if (this.stopped) return;
      this.armTimer();
      this.trigger("timer");
    }, this.opts.intervalMs);
  }

  private armRetry(): void {
    this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.retriesHeld) return;
    // Resource errors that stay: once the backoff has grown to the interval, the timer is the retry
    // (one run an interval, as before), never a retry beside it.
    if (this.onlyResourceErrors && retryCeiling(this.failures, { baseMs: this.retry.baseMs, capMs: Number.POSITIVE_INFINITY }) >= this.opts.intervalMs) return;
    const timing = this.onlyResourceErrors ? { baseMs: this.retry.baseMs, capMs: Math.max(this.retry.baseMs, this.opts.intervalMs) } : this.retry;
    const delay = retryDelay(this.failures, timing, this.opts.random);
    this.opts.log.info({ failures: this.failures, retryInMs: delay }, "reconcile will be tried again");
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = null;
      this.trigger("retry");
    }, delay);
    unref(this.retryTimer);
  }

  private async drain(): Promise<void> {
    while (this.again.size > 0 && !this.stopped) {
      const triggers = [...this.again];
      this.again.clear();
      const result = await this.runOnce(triggers);
      if (this.stopped) break;
      if (result === "failed" || result === "errors") {
        this.failures++;
        this.onlyResourceErrors = result === "errors";
        this.armRetry();
      } else {
        this.failures = 0;
        this.clock.clearTimeout(this.retryTimer);
        this.retryTimer = null;
      }
    }
    this.running = null;
  }

  /** One run under its deadline: past it, the run's signal aborts and the run counts as failed. */
  private async runOnce(triggers: Trigger[]): Promise<RunResult> {
    const abort = new AbortController();
    const deadlineMs = this.opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const deadline = this.clock.setTimeout(() => {
      this.opts.log.error({ triggers, deadlineMs }, "reconcile ran past its deadline; aborting it");
      abort.abort(new DeadlineExceeded(deadlineMs));
    }, deadlineMs);
    unref(deadline);
    try {
      const result = await this.run(triggers, abort.signal);
      return abort.signal.aborted || result === "failed" ? "failed" : (result ?? "ok");
    } catch (err) {
      // A run that threw (say, a store that cannot be written) is tried again by the backoff.
      this.opts.log.error({ err: reasonOf(err), triggers }, "reconcile failed");
      return "failed";
    } finally {
      this.clock.clearTimeout(deadline);
    }
  }
}

function formatMs(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
