// The agent's clock: the time and timers behind one small interface, so code that waits (the
// reconcile loop and its retries, the link's backoff, the supervisor's restart delay and stop
// timeouts, an upgrade's trial) is driven by a test's fake timers instead of sleeping.
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The real clock. It looks up the global timers at each call rather than capturing them, so
 * `vi.useFakeTimers()` drives whatever was given this clock too.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The clock's time as an ISO string (what status files and reports carry). */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

/** A timer that does not keep the process alive on its own (where the clock's timers can be unref'd). */
export function unref(handle: unknown): void {
  (handle as { unref?: () => void } | null)?.unref?.();
}
