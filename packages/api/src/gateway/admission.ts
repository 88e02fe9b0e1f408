// Link admission: how many link handshakes the gateway starts, and how many it has going at once.
// A restarted control plane faces its whole fleet at once; handshakes beyond what it can serve
// time out and are retried, which is what made restarts slow. Instead a handshake is admitted at
// its first request (the challenge, before any crypto or database work; handshake-passes.ts lets
// its upgrade through without a second charge), under two bounds: a token bucket (a ceiling rate)
// and a bound on handshakes in flight (admitted, not yet settled at the upgrade). Every other one
// is answered at once (503) with a Retry-After giving it a place in a queue drained at the rate
// actually served: the ceiling while the gateway keeps up, the handshakes completed per second
// while the in-flight bound holds (decision 0043).

/** The ceiling rate by default: 10,000 hosts queue for 10 s at this rate (decision 0020). */
export const DEFAULT_ADMISSIONS_PER_SECOND = 1000;
/** Handshakes in flight by default: at ~700 served a second (2 shared cores) a handshake waits at most ~0.7 s behind the others. */
export const DEFAULT_HANDSHAKES_IN_FLIGHT = 512;
/** A host is never told to wait longer than this, however long the queue. */
export const MAX_RETRY_AFTER_SECONDS = 300;
/** How much further than the ceiling rate's place a refused host may be sent (see admit). */
export const RETRY_HORIZON_SECONDS = 5;
/** How often the rate served is measured. */
export const SAMPLE_MS = 1000;

/** Ends an admitted handshake once: served (settled at the upgrade) or not (its pass expired unused). */
export type HandshakeDone = (served: boolean) => void;

export type Admission = { admitted: true; done: HandshakeDone } | { admitted: false; retryAfterSeconds: number; waiting: number };

export interface LinkAdmissionOptions {
  /** The ceiling rate: handshakes started per second at most. */
  perSecond?: number;
  /** Handshakes admitted back to back after a quiet spell; a tenth of a second's worth by default. */
  burst?: number;
  /** Handshakes admitted and not yet done, at most (default: unbounded). */
  inFlight?: number;
  now?: () => number;
}

export class LinkAdmission {
  readonly perSecond: number;
  readonly inFlight: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  /** Hosts told to come back and not yet due: the queue ahead of the next one refused. */
  private queued = 0;
  private last: number;
  /** Handshakes admitted and not yet done. */
  private active = 0;
  /** The rate the queue drains at: the ceiling, or what was served while the in-flight bound held. */
  private drainRate: number;
  private sampleStart: number;
  private servedInSample = 0;
  /** Whether the in-flight bound refused a handshake during this sample (the gateway, not the hosts, set the pace). */
  private saturated = false;

  constructor(opts: LinkAdmissionOptions = {}) {
    this.perSecond = Math.max(1, opts.perSecond ?? DEFAULT_ADMISSIONS_PER_SECOND);
    this.inFlight = Math.max(1, opts.inFlight ?? Infinity);
    this.burst = Math.max(1, opts.burst ?? Math.ceil(this.perSecond / 10));
    this.now = opts.now ?? Date.now;
    this.tokens = this.burst;
    this.last = this.now();
    this.drainRate = this.perSecond;
    this.sampleStart = this.last;
  }

  /** Handshakes admitted and not yet done. */
  get handshakesInFlight(): number {
    return this.active;
  }

  /** The rate a refused host's place is counted at (handshakes a second). */
  get servedPerSecond(): number {
    return this.drainRate;
  }

  /** One handshake: admitted now (call `done` when it is over), or told when its turn comes. */
  admit(): Admission {
    const now = this.now();
    this.sample(now);
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    // Time drains the queue at the rate served, whether or not the hosts told to come back did.
    this.queued = Math.max(0, this.queued - elapsed * this.drainRate);
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.perSecond);
    // Queued hosts are not held back for: the one whose turn came competes for the same tokens and slots.
    const full = this.active >= this.inFlight;
    if (this.tokens >= 1 && !full) {
      this.tokens -= 1;
      this.active++;
      let over = false;
      return {
        admitted: true,
        done: (served) => {
          if (over) return;
          over = true;
          this.active--;
          if (served) this.servedInSample++;
        },
      };
    }
    if (full) this.saturated = true;
    // Its place in the queue, at the rate served, rounded up to the whole seconds Retry-After carries;
    // but never further out than the ceiling rate would put it, plus RETRY_HORIZON_SECONDS. The rate
    // measured in a restarted gateway's first seconds (cold, refusing thousands) is its lowest: hosts
    // placed by it alone came back at that rate for the rest of the restart while the gateway sat half
    // idle. Placed no further than the ceiling's queue, a host whose turn has not come is refused again,
    // cheaply (no crypto, no query), and placed by the rate of the moment; re-asks stay under the ceiling rate.
    this.queued += 1;
    const atRate = Math.ceil(this.queued / this.drainRate);
    const atCeiling = Math.ceil(this.queued / this.perSecond) + RETRY_HORIZON_SECONDS;
    const retryAfterSeconds = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.min(atRate, atCeiling)));
    return { admitted: false, retryAfterSeconds, waiting: Math.ceil(this.queued) };
  }

  /**
   * Once a sample: while the in-flight bound held, the handshakes completed per second are what the
   * gateway serves (smoothed, never under a tenth of the ceiling, so one stalled second does not send
   * the queue minutes away); when it did not hold, the gateway kept up, and the queue drains at the ceiling.
   */
  private sample(now: number) {
    const span = now - this.sampleStart;
    if (span < SAMPLE_MS) return;
    if (this.saturated && span < 2 * SAMPLE_MS) {
      const measured = this.servedInSample / (span / 1000);
      this.drainRate = Math.min(this.perSecond, Math.max(this.perSecond / 10, (this.drainRate + measured) / 2));
    } else if (!this.saturated) {
      this.drainRate = this.perSecond;
    }
    this.sampleStart = now;
    this.servedInSample = 0;
    this.saturated = this.active >= this.inFlight;
  }
}

/**
 * The admission, shared fairly: each address key (an IPv4 address, an IPv6 /64) may start at most
 * `perAddress` handshakes a second before the shared bucket is asked. Anyone can send upgrades
 * without credentials, and the shared bucket is checked before any signature: without a share per
 * address one client could take every token and push real hosts' Retry-After to the cap. A host
 * over its address's share is told its turn in its address's own queue and costs the others nothing.
 * The same for handshakes in flight: one address holds at most `perAddressInFlight` of them (a
 * quarter of the bound by default), so a client that fetches challenges and never links cannot hold
 * every slot until its passes expire. Behind one balancer address (no client address reaches the
 * gateway), set both shares to the whole.
 */
export class FairLinkAdmission {
  private readonly byAddress = new Map<string, { admission: LinkAdmission; lastUsed: number }>();
  private readonly shared: LinkAdmission;

  constructor(private readonly opts: LinkAdmissionOptions & { perAddress?: number; perAddressInFlight?: number } = {}) {
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
      const inFlight = this.opts.perAddressInFlight ?? (Number.isFinite(this.shared.inFlight) ? Math.max(1, Math.ceil(this.shared.inFlight / 4)) : Infinity);
      entry = {
        admission: new LinkAdmission({ perSecond, burst: this.opts.burst ?? Math.ceil(this.shared.perSecond / 10), inFlight, now: this.opts.now }),
        lastUsed: now,
      };
      this.byAddress.set(addressKey, entry);
    }
    entry.lastUsed = now;
    const own = entry.admission.admit();
    if (!own.admitted) return own;
    const shared = this.shared.admit();
    if (!shared.admitted) {
      own.done(false);
      return shared;
    }
    return {
      admitted: true,
      done: (served) => {
        own.done(served);
        shared.done(served);
      },
    };
  }

  /** Handshakes admitted and not yet done, over all addresses. */
  get handshakesInFlight(): number {
    return this.shared.handshakesInFlight;
  }

  /** Forgets addresses quiet for a minute (their queues have drained by then at any useful rate). */
  private prune(now: number) {
    for (const [key, entry] of this.byAddress) if (now - entry.lastUsed > 60_000) this.byAddress.delete(key);
  }
}
