// Authenticated link connects per node on one gateway: a host reconnecting in a loop
// (each cycle a signature check, writes and a declaration push) is told to wait instead.
export type ConnectAttempt = { allowed: true } | { allowed: false; retryAfterMs: number };

export class ConnectLimit {
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a connect of this node; refused (with when the oldest one leaves the window) past `limit` per window. */
  attempt(nodeId: string): ConnectAttempt {
    const now = this.now();
    const times = (this.recent.get(nodeId) ?? []).filter((t) => now - t < this.windowMs);
    if (times.length >= this.limit) {
      this.recent.set(nodeId, times);
      return { allowed: false, retryAfterMs: Math.max(1, times[0]! + this.windowMs - now) };
    }
    times.push(now);
    if (this.recent.size > 100_000 && !this.recent.has(nodeId)) this.sweep(now);
    this.recent.set(nodeId, times);
    return { allowed: true };
  }

  private sweep(now: number) {
    for (const [k, times] of this.recent) if (times.every((t) => now - t >= this.windowMs)) this.recent.delete(k);
  }
}
