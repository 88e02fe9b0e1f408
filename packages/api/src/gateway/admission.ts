// Link admission: how many link handshakes the gateway starts per second. A restarted
// control plane faces its whole fleet at once; handshakes beyond what it can verify and
// mark time out and are retried, which is what made restarts slow. Instead a token bucket
// admits a bounded rate, and every other handshake is answered at once (503, before any
// signature check or database work) with a Retry-After that gives it a place in a queue
// drained at that rate: the hosts come back spread out, as many per second as are served.

/** Handshakes started per second by default: a restart peaked at 650/s (65 links in 100 ms) with no timeout on 2 cores, and 10,000 hosts queue for 10 s at this rate (decision 0020). */
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

/**
 * The admission, shared fairly: each address key (an IPv4 address, an IPv6 /64) may start at most
 * `perAddress` handshakes a second before the shared bucket is asked. Anyone can send upgrades
 * without credentials, and the shared bucket is checked before any signature: without a share per
 * address one client could take every token and push real hosts' Retry-After to the cap. A host
 * over its address's share is told its turn in its address's own queue and costs the others nothing.
 * Behind one balancer address (no client address reaches the gateway), set the share to the rate.
 */
export class FairLinkAdmission {
  private readonly byAddress = new Map<string, { admission: LinkAdmission; lastUsed: number }>();
  private readonly shared: LinkAdmission;

  constructor(private readonly opts: LinkAdmissionOptions & { perAddress?: number } = {}) {
    this.shared = new LinkAdmission(opts);
  }

  admit(addressKey: string): Admission {
    const now = (this.opts.now ?? Date.now)();
    let entry = this.byAddress.get(addressKey);
    if (!entry) {
      if (this.byAddress.size >= 10_000) this.prune(now);
      const perSecond = this.opts.perAddress ?? Math.max(1, Math.ceil(this.shared.perSecond / 4));
      // The same burst as the shared bucket: a site's hosts coming back together are not split up; a
      // flood still gets at most the burst and then its share of the rate.
      entry = { admission: new LinkAdmission({ perSecond, burst: this.opts.burst ?? Math.ceil(this.shared.perSecond / 10), now: this.opts.now }), lastUsed: now };
      this.byAddress.set(addressKey, entry);
    }
    entry.lastUsed = now;
    const own = entry.admission.admit();
    return own.admitted ? this.shared.admit() : own;
  }

  /** Forgets addresses quiet for a minute (their queues have drained by then at any useful rate). */
  private prune(now: number) {
    for (const [key, entry] of this.byAddress) if (now - entry.lastUsed > 60_000) this.byAddress.delete(key);
  }
}
