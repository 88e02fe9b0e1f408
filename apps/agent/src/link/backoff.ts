// Full-jitter exponential backoff (base 500 ms, cap 30 s, and never a window longer than the
// failures have lasted): a fleet that lost its control plane comes back spread out instead of
// all at once, over a window that grows with how long it was away. A control plane that is there
// but did not answer in time (busy) keeps a short window instead (nextLive).

/** The window after a request timed out against a control plane that accepted the connection. */
export const LIVE_WINDOW_MS = 5_000;

export class Backoff {
  private attempt = 0;
  /** When this run of failures began (the first delay asked for since the last reset). */
  private since: number | null = null;
  private pinned = false;
  constructor(private readonly opts: { baseMs?: number; capMs?: number; liveMs?: number; random?: () => number; now?: () => number } = {}) {}

  private get base(): number {
    return this.opts.baseMs ?? 500;
  }
  private get cap(): number {
    return this.opts.capMs ?? 30_000;
  }

  /**
   * The next delay: uniform in [0, ceiling), the ceiling doubling per attempt from the base but
   * never past how long the failures have lasted, nor the cap. A fleet whose control plane was
   * away 8 s is spread over ~8 s when it comes back, not over the 16 or 30 s the doubling alone
   * reaches by then (which made a restart take 30 s after the control plane was back).
   */
  next(): number {
    const now = (this.opts.now ?? Date.now)();
    this.since ??= now;
    const doubling = this.base * 2 ** Math.min(this.attempt, 30);
    const ceiling = this.pinned ? this.cap : Math.min(this.cap, doubling, Math.max(this.base, now - this.since));
    this.attempt++;
    return Math.floor((this.opts.random ?? Math.random)() * ceiling);
  }

  /**
   * The next delay after a request timed out against a control plane that accepted its connection:
   * it is alive (restarted and busy, its accept queue full), so its turn comes soon. Uniform in
   * [0, LIVE_WINDOW_MS), and the doubling is not advanced: the growing window is for a control plane
   * that is away. Growing it here made a host whose request timed out during a restart wait out
   * the 30 s cap while the control plane sat idle (decision 0020, "Restart at 10,000").
   */
  nextLive(): number {
    const now = (this.opts.now ?? Date.now)();
    this.since ??= now;
    const ceiling = this.pinned ? this.cap : Math.min(this.cap, this.opts.liveMs ?? LIVE_WINDOW_MS);
    return Math.floor((this.opts.random ?? Math.random)() * ceiling);
  }

  /** After a link stayed up: start from the base again. */
  reset(): void {
    this.attempt = 0;
    this.since = null;
    this.pinned = false;
  }

  /** A revoked node: every further delay is drawn at the cap. */
  pinToCap(): void {
    this.pinned = true;
  }
}

/**
 * The wait after a refusal that said when to come back (Retry-After): never sooner, and
 * spread, so hosts told "3 s" together do not all return at 3.000 s. Retry-After is whole
 * seconds, so the spread is at least a second; longer waits spread by a quarter more, which
 * keeps a queue the gateway drains at its admission rate arriving at about that rate.
 * Uniform in [retryAfter, retryAfter + max(1 s, retryAfter / 4)).
 */
export function jitteredRetryAfter(retryAfterMs: number, random: () => number = Math.random): number {
  if (!(retryAfterMs > 0)) return 0;
  const spread = Math.max(1000, retryAfterMs / 4);
  return Math.floor(retryAfterMs + random() * spread);
}

/** How the last attempt failed, as far as the wait goes. */
export interface Failure {
  /** The control plane said when to come back (Retry-After, at the challenge or the upgrade). */
  retryAfterMs?: number;
  /** A request timed out against a control plane that accepted the connection (it is alive, and busy). */
  liveServer?: boolean;
}

/**
 * The next wait of a link loop. A control plane that said when to come back (Retry-After) has
 * given this host its turn: that time, jittered, and the backoff is left where it is (its growing
 * window is for a control plane that cannot answer at all). Taking the longer of the two instead
 * made a host refused a few times wait out the 30 s cap though its turn came in 1 s. A live control
 * plane that did not answer in time: the short window (Backoff.nextLive). Otherwise the backoff.
 */
export function reconnectDelay(backoff: Backoff, failure: Failure = {}, random: () => number = Math.random): number {
  if (failure.retryAfterMs !== undefined && failure.retryAfterMs > 0) return jitteredRetryAfter(failure.retryAfterMs, random);
  if (failure.liveServer) return backoff.nextLive();
  return backoff.next();
}

/** Whether a failed attempt timed out against a control plane that is there: a challenge request whose connection was accepted, or an upgrade right after a challenge was answered. */
export function timedOutAgainstLiveServer(err: unknown, challengeAnswered: boolean): boolean {
  const e = err as { name?: unknown; connected?: unknown; message?: unknown } | null;
  if (e?.name === "NoAnswerInTime") return e.connected === true;
  return challengeAnswered && typeof e?.message === "string" && /timed? ?out/i.test(e.message);
}
