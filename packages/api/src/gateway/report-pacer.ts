// Paces each node's report writes on one gateway: an unchanged report costs no write;
// a changed one is written at most once per interval. One that comes sooner waits (a
// later one replaces it, handing on its drift for the audit) and is written when its
// window opens or its link closes, never dropped.
import { LIMITS, type Drift, type ReportFrame } from "@mesh/protocol";

interface Pace {
  lastWriteAt: number;
  lastHash?: string;
  waiting?: ReportFrame;
  /** Drift of the waiting reports a later one replaced, by resource id: the audit still hears of it. */
  carried?: Map<string, Drift>;
  timer?: NodeJS.Timeout;
}

export type Offer = "now" | "unchanged" | "later";

export class ReportPacer {
  private readonly nodes = new Map<string, Pace>();

  constructor(
    private readonly intervalMs: number,
    private readonly hash: (frame: ReportFrame) => string,
    /** Called when a waiting report's window opens: the caller writes it (in the link's order). */
    private readonly release: (nodeId: string, frame: ReportFrame, carriedDrift: Drift[]) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** "now": write it; "unchanged": same as the last written, ack only; "later": it waits for release. */
  offer(nodeId: string, frame: ReportFrame): Offer {
    let pace = this.nodes.get(nodeId);
    if (!pace) this.nodes.set(nodeId, (pace = { lastWriteAt: -Infinity }));
    if (pace.waiting) {
      const carried = (pace.carried ??= new Map());
      for (const d of pace.waiting.report.drift) if (carried.size < LIMITS.resources || carried.has(d.id)) carried.set(d.id, d);
      pace.waiting = frame;
      return "later";
    }
    const hash = this.hash(frame);
    if (hash === pace.lastHash) return "unchanged";
    const wait = pace.lastWriteAt + this.intervalMs - this.now();
    if (wait <= 0) {
      pace.lastWriteAt = this.now();
      pace.lastHash = hash;
      return "now";
    }
    pace.waiting = frame;
    pace.timer = setTimeout(() => this.flush(nodeId), wait);
    pace.timer.unref();
    return "later";
  }

  /** Releases a waiting report at once (its link closed, or its window opened). */
  flush(nodeId: string): void {
    const pace = this.nodes.get(nodeId);
    const frame = pace?.waiting;
    if (!pace || !frame) return;
    clearTimeout(pace.timer);
    const carried = [...(pace.carried?.values() ?? [])];
    pace.waiting = undefined;
    pace.carried = undefined;
    pace.timer = undefined;
    pace.lastWriteAt = this.now();
    pace.lastHash = this.hash(frame);
    this.release(nodeId, frame, carried);
  }

  /** A write failed: the next report is written whatever its hash. */
  forget(nodeId: string): void {
    const pace = this.nodes.get(nodeId);
    if (pace) pace.lastHash = undefined;
  }

  /** Drops what no longer paces anything (idle past the interval). */
  sweep(): void {
    const now = this.now();
    for (const [nodeId, pace] of this.nodes) if (!pace.waiting && now - pace.lastWriteAt > this.intervalMs) this.nodes.delete(nodeId);
  }

  /** Releases every waiting report (shutdown). */
  flushAll(): void {
    for (const nodeId of [...this.nodes.keys()]) this.flush(nodeId);
  }
}
