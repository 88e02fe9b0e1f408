// The agent's clock: the time and timers behind one small interface, so code that waits (the
// supervisor's restart delay, its stop timeouts) is driven by a test's fake timers instead of sleeping.
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
