// The reconcile loop: triggers (start, declaration, timer, reconnect) feed one
// run at a time; triggers that arrive during a run coalesce into one more run.
import type { Logger } from "../log";
import { reasonOf } from "../host-error";

/**
 * `retry`: a write of the host's own state failed; `store`: the control plane holds a newer store generation;
 * `watch`: an owned path changed (drift-watch.ts); `request`: reconcile now, over the link or the local socket.
 */
export type Trigger = "start" | "declaration" | "timer" | "reconnect" | "rejected" | "retry" | "store" | "watch" | "request";

export class ReconcileLoop {
  private running: Promise<void> | null = null;
  private again = new Set<Trigger>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly run: (triggers: Trigger[]) => Promise<void>,
    private readonly opts: { intervalMs: number; log: Logger },
  ) {}

  start(): void {
    this.timer = setInterval(() => this.trigger("timer"), this.opts.intervalMs);
    this.trigger("start");
  }

  trigger(reason: Trigger): void {
    if (this.stopped) return;
    this.again.add(reason);
    if (!this.running) this.running = this.drain();
  }

  /** Resolves once no run is in progress and none is queued. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.again.clear();
    await this.idle();
  }

  private async drain(): Promise<void> {
    while (this.again.size > 0 && !this.stopped) {
      const triggers = [...this.again];
      this.again.clear();
      try {
        await this.run(triggers);
      } catch (err) {
        // A failed run (say, a store that cannot be written) is retried by the next trigger.
        this.opts.log.error({ err: reasonOf(err), triggers }, "reconcile failed");
      }
    }
    this.running = null;
  }
}
