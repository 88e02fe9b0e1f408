// Paces what one node sends that costs a write (reports, facts) on one gateway: a value
// equal to the last one written costs nothing; a changed one is written at most once per
// interval. One that comes sooner waits (a later one replaces it, optionally carrying
// something of it on) and is written when its window opens or its link closes, never dropped.

interface Pace<T, C> {
  lastWriteAt: number;
  lastHash?: string;
  waiting?: T;
  carried?: C;
  timer?: NodeJS.Timeout;
}

export type Offer = "now" | "unchanged" | "later";

export interface PacerOptions<T, C> {
  intervalMs: number;
  hash: (value: T) => string;
  /** Called when a waiting value's window opens: the caller writes it (in the link's order). */
  release: (nodeId: string, value: T, carried: C | undefined) => void;
  /** What a replaced value hands on to the one replacing it. */
  carry?: (carried: C | undefined, replaced: T) => C;
  now?: () => number;
}

export class Pacer<T, C = never> {
  private readonly nodes = new Map<string, Pace<T, C>>();
  private readonly now: () => number;

  constructor(private readonly opts: PacerOptions<T, C>) {
    this.now = opts.now ?? Date.now;
  }

  /** "now": write it; "unchanged": same as the last written; "later": it waits for release. */
  offer(nodeId: string, value: T): Offer {
    let pace = this.nodes.get(nodeId);
    if (!pace) this.nodes.set(nodeId, (pace = { lastWriteAt: -Infinity }));
    if (pace.waiting !== undefined) {
      if (this.opts.carry) pace.carried = this.opts.carry(pace.carried, pace.waiting);
      pace.waiting = value;
      return "later";
    }
    const hash = this.opts.hash(value);
    if (hash === pace.lastHash) return "unchanged";
    const wait = pace.lastWriteAt + this.opts.intervalMs - this.now();
    if (wait <= 0) {
      pace.lastWriteAt = this.now();
      pace.lastHash = hash;
      return "now";
    }
    pace.waiting = value;
    pace.timer = setTimeout(() => this.flush(nodeId), wait);
    pace.timer.unref();
    return "later";
  }

  /**
   * Takes a value to be written now, whatever its window: one waiting is replaced by it
   * (what it carried is returned, with what it carries on), and the window starts again.
   */
  take(nodeId: string, value: T): C | undefined {
    let pace = this.nodes.get(nodeId);
    if (!pace) this.nodes.set(nodeId, (pace = { lastWriteAt: -Infinity }));
    let carried = pace.carried;
    if (pace.waiting !== undefined && this.opts.carry) carried = this.opts.carry(carried, pace.waiting);
    clearTimeout(pace.timer);
    pace.waiting = undefined;
    pace.carried = undefined;
    pace.timer = undefined;
    pace.lastWriteAt = this.now();
    pace.lastHash = this.opts.hash(value);
    return carried;
  }

  /** Releases a waiting value at once (its link closed, or its window opened). */
  flush(nodeId: string): void {
    const pace = this.nodes.get(nodeId);
    const value = pace?.waiting;
    if (!pace || value === undefined) return;
    clearTimeout(pace.timer);
    const carried = pace.carried;
    pace.waiting = undefined;
    pace.carried = undefined;
    pace.timer = undefined;
    pace.lastWriteAt = this.now();
    pace.lastHash = this.opts.hash(value);
    this.opts.release(nodeId, value, carried);
  }

  /** Whether a value of this node waits for its window (a report equal to the stored one must then still replace it). */
  isWaiting(nodeId: string): boolean {
    return this.nodes.get(nodeId)?.waiting !== undefined;
  }

  /** A write failed: the next value is written whatever its hash. */
  forget(nodeId: string): void {
    const pace = this.nodes.get(nodeId);
    if (pace) pace.lastHash = undefined;
  }

  /** Drops what no longer paces anything (idle past the interval). */
  sweep(): void {
    const now = this.now();
    for (const [nodeId, pace] of this.nodes) if (pace.waiting === undefined && now - pace.lastWriteAt > this.opts.intervalMs) this.nodes.delete(nodeId);
  }

  /** Releases every waiting value (shutdown). */
  flushAll(): void {
    for (const nodeId of [...this.nodes.keys()]) this.flush(nodeId);
  }
}
