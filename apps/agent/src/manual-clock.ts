// A Clock for tests that share the process with real I/O (sockets, files): time moves only when the
// test says so, while everything else runs as it does. Where nothing real is involved, prefer
// vi.useFakeTimers() with the systemClock.
import type { Clock } from "./clock";

export class ManualClock implements Clock {
  private at: number;
  private seq = 0;
  private readonly timers = new Map<number, { due: number; fn: () => void }>();

  constructor(start = Date.parse("2030-01-01T00:00:00Z")) {
    this.at = start;
  }

  now(): number {
    return this.at;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { due: this.at + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === "number") this.timers.delete(handle);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time on by `ms`, firing each timer that falls due on the way, in order (one armed by another included). */
  advance(ms: number): void {
    const until = this.at + ms;
    for (;;) {
      let next: [number, { due: number; fn: () => void }] | null = null;
      for (const entry of this.timers) if (entry[1].due <= until && (!next || entry[1].due < next[1].due)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.at = next[1].due;
      next[1].fn();
    }
    this.at = until;
  }
}
