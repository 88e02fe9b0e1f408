// Keeps the links a gateway holds on their nodes' current declarations when a notification was
// missed or a push failed: compares links with the database through the fleet path (one versions
// query, one bodies query for any number of links), one comparison at a time, retried with backoff.
import type { Logger } from "pino";
import type { PushLink, Pusher } from "./push";
import { retryDelayMs } from "../batching/retry-delay";

export interface CatchUpOptions {
  /** The links fleet-wide checks cover (ready and open). */
  links: () => PushLink[];
  /** Whether a link named in a check is still held (a closed or replaced link is not compared). */
  holds: (link: PushLink) => boolean;
  /** How long links named by reports wait for others to share their comparison (default 1 s). */
  reportWindowMs?: number;
}

/**
 * Three reasons to compare: a fleet-wide change (`*`), a bus gap (anything may have been missed),
 * and hosts reporting (one may be behind a change whose notification never came). Each comparison
 * pushes what is behind; requests arriving while one runs join the next, so a burst costs one more.
 */
export class DeclarationCatchUp {
  /** "all": every held link; otherwise the links named since the last comparison. */
  private pending: "all" | Set<PushLink> | null = null;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;

  constructor(
    private readonly pusher: Pusher,
    private readonly log: Logger,
    private readonly opts: CatchUpOptions,
  ) {}

  /** Compare every held link now (a fleet-wide change, or the bus may have missed one). */
  all(): void {
    this.pending = "all";
    this.schedule(0);
  }

  /** A host reported: compare its link with the database soon, with the others that report meanwhile. */
  reported(link: PushLink): void {
    if (this.pending === "all") return;
    this.pending ??= new Set();
    this.pending.add(link);
    this.schedule(this.opts.reportWindowMs ?? 1_000);
  }

  /** Waits for a comparison in flight; nothing new starts. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number) {
    if (this.closed || this.running) return; // the running comparison schedules the next when it ends
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), delayMs);
    this.timer.unref();
  }

  private run() {
    this.timer = null;
    const pending = this.pending;
    this.pending = null;
    if (pending === null || this.closed) return;
    const links = pending === "all" ? this.opts.links() : [...pending].filter(this.opts.holds);
    if (links.length === 0) return;
    this.running = this.pusher.pushChanged(links).then(
      () => {
        this.failures = 0;
      },
      (err) => {
        // Nothing of this comparison is lost: its links join the next one, after a pause.
        this.failures++;
        this.log.warn({ err, links: links.length, failures: this.failures }, "declaration comparison failed; will retry");
        const later = this.pending;
        if (pending === "all" || later === "all") this.pending = "all";
        else this.pending = new Set([...pending, ...(later ?? [])]);
      },
    );
    void this.running.finally(() => {
      this.running = null;
      if (this.pending !== null)
        this.schedule(this.failures > 0 ? retryDelayMs(this.failures) : this.pending === "all" ? 0 : (this.opts.reportWindowMs ?? 1_000));
    });
  }
}
