// Link admission: how many link handshakes the gateway starts per second. A restarted
// control plane faces its whole fleet at once; handshakes beyond what it can verify and
// mark time out and are retried, which is what made restarts slow. Instead a token bucket
// admits a bounded rate, and every other handshake is answered at once (503, before any
// signature check or database work) with a Retry-After that gives it a place in a queue
// drained at that rate: the hosts come back spread out, as many per second as are served.

/** Handshakes started per second by default: a restart peaked at 650/s (65 links in 100 ms) with no timeout on 2 cores, and 10,000 hosts queue for 10 s at this rate (DRAFT-enrolment-and-admission.md). */
export const DEFAULT_ADMISSIONS_PER_SECOND = 1000;
/** A host is never told to wait longer than this, however long the queue. */
export const MAX_RETRY_AFTER_SECONDS = 300;

export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number; waiting: number };

export interface LinkAdmissionOptions {
  perSecond?: number;
  /** Handshakes admitted back to back after a quiet spell; a tenth of a second's worth by default. */
  burst?: number;
  now?: () => number;
}

export class LinkAdmission {
  readonly perSecond: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  /** Hosts told to come back and not yet due: the queue ahead of the next one refused. */
  private queued = 0;
  private last: number;

  constructor(opts: LinkAdmissionOptions = {}) {
    this.perSecond = Math.max(1, opts.perSecond ?? DEFAULT_ADMISSIONS_PER_SECOND);
    this.burst = Math.max(1, opts.burst ?? Math.ceil(this.perSecond / 10));
    this.now = opts.now ?? Date.now;
    this.tokens = this.burst;
    this.last = this.now();
  }

  /** One handshake: admitted now, or told when its turn comes. */
  admit(): Admission {
    const now = this.now();
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    // Time drains the queue at the admission rate, whether or not the hosts told to come back did.
    this.queued = Math.max(0, this.queued - elapsed * this.perSecond);
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.perSecond);
    // Queued hosts are not held back for: the one whose turn came competes for the same tokens.
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { admitted: true };
    }
    // Its place in the queue, at the rate, rounded up to the whole seconds Retry-After carries.
    this.queued += 1;
    const retryAfterSeconds = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(this.queued / this.perSecond)));
    return { admitted: false, retryAfterSeconds, waiting: Math.ceil(this.queued) };
  }
}
