// Slows down guessing by counting failures per key and locking the key for an
// exponentially growing, bounded time once it has failed too often. In memory, per instance.
//
// An attempt is counted as a failure when it starts (so a burst of parallel guesses
// cannot all pass before the first one fails) and is given back when it succeeds:
// only failures are left in the count. Keys are chosen by the caller, e.g. (account,
// address), so that failures from one address never lock another one out.

export interface FailureBackoffOptions {
  /** Failures allowed before the key is locked at all. */
  freeFailures: number;
  /** The first lock; each further failure doubles it... */
  baseDelayMs?: number;
  /** ...up to this bound. */
  maxDelayMs?: number;
  /** A key quiet for this long starts again from nothing. */
  forgetAfterMs?: number;
  /** Keys held at most; the least recently failing are dropped first. */
  maxKeys?: number;
  now?: () => number;
}

export type Attempt = { allowed: true } | { allowed: false; retryAfterMs: number };

interface KeyState {
  failures: number;
  lockedUntil: number;
  lastAt: number;
}

export class FailureBackoff {
  private readonly keys = new Map<string, KeyState>();
  private readonly freeFailures: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly forgetAfterMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(options: FailureBackoffOptions) {
    this.freeFailures = options.freeFailures;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 15 * 60_000;
    this.forgetAfterMs = options.forgetAfterMs ?? Math.max(4 * this.maxDelayMs, 60 * 60_000);
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Before an attempt: refused while the key is locked (a refused attempt is not
   * counted, so hammering a locked key does not lengthen the lock); otherwise the
   * attempt counts as a failure until `succeeded` or `forgive` gives it back.
   */
  attempt(key: string, opts: { gate?: boolean } = {}): Attempt {
    const now = this.now();
    let state = this.keys.get(key);
    if (state && now - state.lastAt >= this.forgetAfterMs) state = undefined;
    // gate: false counts the attempt without being refused by the lock (a key consulted only sometimes).
    if (state && now < state.lockedUntil && opts.gate !== false) return { allowed: false, retryAfterMs: state.lockedUntil - now };
    state ??= { failures: 0, lockedUntil: 0, lastAt: now };
    state.failures++;
    state.lastAt = now;
    const over = state.failures - this.freeFailures;
    if (over > 0) state.lockedUntil = now + Math.min(this.baseDelayMs * 2 ** Math.min(over - 1, 40), this.maxDelayMs);
    // Re-inserted so the map's order is least recently failing first.
    this.keys.delete(key);
    this.keys.set(key, state);
    if (this.keys.size > this.maxKeys) this.shrink(now);
    return { allowed: true };
  }

  /** The attempt worked: the key starts again from nothing. */
  succeeded(key: string): void {
    this.keys.delete(key);
  }

  /** The attempt worked, but earlier failures stand (a shared key, such as an address). */
  forgive(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    state.failures = Math.max(0, state.failures - 1);
    if (state.failures <= this.freeFailures) state.lockedUntil = 0;
    if (state.failures === 0) this.keys.delete(key);
  }

  /** Failures counted for a key now (for tests and logs). */
  failures(key: string): number {
    const state = this.keys.get(key);
    return state && this.now() - state.lastAt < this.forgetAfterMs ? state.failures : 0;
  }

  private shrink(now: number) {
    for (const [k, s] of this.keys) if (now - s.lastAt >= this.forgetAfterMs) this.keys.delete(k);
    for (const k of this.keys.keys()) {
      if (this.keys.size <= this.maxKeys) break;
      this.keys.delete(k);
    }
  }
}

/** "try again in 4 s" / "in 3 min", for error messages. */
export function describeWait(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.ceil(s / 60)} min`;
}
