// Per-node budgets for what a host can make the control plane write (audit events, log
// lines): a few per window; past that each is left out and counted, and the next one told.
import { RateLimiter } from "./rate-limiter";

/** What one written event carries: how many of its kind were left out before it. */
export interface Slot {
  suppressed: number;
}

export class EventBudget {
  private readonly limiter: RateLimiter;
  private readonly left = new Map<string, number>();

  constructor(limit: number, windowMs: number, now?: () => number) {
    this.limiter = new RateLimiter(limit, windowMs, now);
  }

  /** A slot when this key may write now (with the count left out since its last one); null when it is left out and counted. */
  take(key: string): Slot | null {
    const suppressed = this.left.get(key) ?? 0;
    if (this.limiter.take(key)) {
      this.left.delete(key);
      return { suppressed };
    }
    // Bounded like the limiter: a count is only ever kept for a key that spent its budget.
    if (this.left.size > 100_000 && !this.left.has(key)) return null;
    this.left.set(key, suppressed + 1);
    return null;
  }
}
