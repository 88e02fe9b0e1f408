// The host's unacknowledged reports, kept in the state dir until the control plane says it
// stored them, so a report made while the control plane could not store it is sent again.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { Report, type ReportOrigin } from "@mesh/protocol";
import type { Logger } from "../log";
import { parseJson } from "../store/read-json";
import type { Store } from "../store/store";
import { reasonOf } from "../host-error";
import { KEYS } from "../state-dir/keys";
import { coalesce, type OutboxBounds, type OutboxEntry } from "./coalesce";

export type { OutboxEntry } from "./coalesce";

/** Bounded: a long outage with drift flapping keeps at most this much (the newest always). */
export const OUTBOX_BOUNDS: OutboxBounds = { entries: 32, bytes: 8 * 1024 * 1024 };

const OutboxFile = z.strictObject({
  format: z.literal(1),
  stream: z.string().regex(/^[0-9a-f]{32}$/),
  /** The next report's sequence: never handed out twice in one stream. */
  next: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  pending: z.array(z.strictObject({ sequence: z.number().int().min(0), report: Report })).max(OUTBOX_BOUNDS.entries),
});
type OutboxFile = z.infer<typeof OutboxFile>;

/** What a report is sent as: its sequence (the frame's seq, what the ack answers) and, when durable, its origin. */
export interface OutboxSend {
  sequence: number;
  report: Report;
  /** Only for a report whose sequence was kept on disk: an unkept one could be numbered again after a crash. */
  origin?: ReportOrigin;
}

export class ReportOutbox {
  private writes: Promise<void> = Promise.resolve();
  /** Reports whose numbering did not reach the disk (their write failed): sent without an origin, as they were first. */
  private readonly unkept = new Set<number>();

  private constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private state: OutboxFile,
  ) {}

  /** Reads the outbox; a damaged one is set aside and a new stream starts (its reports are gone, said in the log). */
  static async open(store: Store, log: Logger, bounds = OUTBOX_BOUNDS): Promise<ReportOutbox> {
    const raw = await store.read(KEYS.reportOutbox);
    if (raw) {
      const parsed = raw.length <= bounds.bytes + 64 * 1024 ? parseJson(raw, OutboxFile) : null;
      if (parsed) return new ReportOutbox(store, log, parsed);
      log.error({ file: KEYS.reportOutbox, aside: `${KEYS.reportOutbox}.damaged` }, "report outbox is unreadable; set aside, starting a new one");
      await store.setAside(KEYS.reportOutbox, `${KEYS.reportOutbox}.damaged`);
    }
    return new ReportOutbox(store, log, { format: 1, stream: randomBytes(16).toString("hex"), next: 0, pending: [] });
  }

  get stream(): string {
    return this.state.stream;
  }

  /** What is waiting for an ack, oldest first, as it is sent. */
  pending(): OutboxSend[] {
    return this.state.pending.map((e) => this.toSend(e));
  }

  /**
   * Numbers a new report, keeps it with what still tells something of the older ones, and
   * writes the outbox durably before it is sent. A failed write is logged: the report is still
   * sent, without an origin (the control plane stores it as an older host's).
   */
  async add(report: Report, bounds = OUTBOX_BOUNDS): Promise<OutboxSend> {
    const entry: OutboxEntry = { sequence: this.state.next, report };
    this.state = { ...this.state, next: this.state.next + 1, pending: coalesce(this.state.pending, entry, bounds) };
    if (!(await this.persist())) this.unkept.add(entry.sequence);
    const newest = this.state.pending[this.state.pending.length - 1]!;
    return this.toSend(newest);
  }

  /** The control plane stored every report up to `sequence` (acks answer all before them). */
  async acknowledge(sequence: number): Promise<void> {
    const before = this.state.pending.length;
    this.state = { ...this.state, pending: this.state.pending.filter((e) => e.sequence > sequence) };
    for (const s of this.unkept) if (s <= sequence) this.unkept.delete(s);
    if (this.state.pending.length !== before) await this.persist();
  }

  private toSend(e: OutboxEntry): OutboxSend {
    return this.unkept.has(e.sequence)
      ? { sequence: e.sequence, report: e.report }
      : { sequence: e.sequence, report: e.report, origin: { stream: this.state.stream, sequence: e.sequence } };
  }

  /** One write at a time, each of the state as it is then; false when it could not be written. */
  private persist(): Promise<boolean> {
    const done = this.writes.then(async () => {
      try {
        await this.store.write(KEYS.reportOutbox, JSON.stringify(this.state));
        return true;
      } catch (err) {
        this.log.error({ file: KEYS.reportOutbox, reason: reasonOf(err) }, "cannot keep the report outbox; reports are sent without an origin until it can");
        return false;
      }
    });
    this.writes = done.then(() => undefined);
    return done;
  }
}
