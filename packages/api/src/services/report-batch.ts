// Reports stored together (issue 11): after a fleet-wide change every host reports at once, and one
// transaction per report (~500/s) made 10,000 reports take ~20 s to record. writeReports stores N
// reports in one transaction with a fixed number of set-based statements, each with ONE json
// parameter: lock the nodes rows in id order (the order a fleet compile and the presence batches
// lock them in: no deadlock), one statement for history + latest, one UPDATE of the nodes' figures,
// one pruning DELETE, one INSERT of every audit event, one NOTIFY. The ReportBatcher collects one
// gateway's reports for a short window and writes them so; each caller awaits its own answer.
import { retryDelayMs } from "../batching/retry-delay";
import { sql } from "drizzle-orm";
import { notify, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import { storedBefore, type Drift, type Report, type ReportOrigin } from "@mesh/protocol";
import type { Deps } from "../deps";
import { contentHash } from "../compile/hash";
import { HEALTH_FIGURES_COLUMNS, HEALTH_FIGURES_SET, healthFigures, type HealthFigures } from "./report-health-figures";
import { timed, timedSince } from "../batching/statement-times";
import {
  latestHashes,
  lockNodesWithLatest,
  pruneReportBodies,
  pruneReportHistory,
  reportBody,
  reportBodyJson,
  storeReportBodies,
  insertReportRows,
  type ReportRow,
} from "./report-store";

export const REPORT_HISTORY_PER_NODE = 20;
/** A drift event names this many resource ids and carries this many entries; the rest are in the report. */
export const DRIFT_EVENT_IDS = 20;
export const DRIFT_EVENT_ENTRIES = 5;

export interface RecordReportOptions {
  /** False when the node has spent its budget of drift events for now (the report is still stored). */
  driftEvent?: boolean;
  /** Drift events left out since the last one, said in the next one. */
  suppressedDriftEvents?: number;
  /** Drift of reports this one replaced before they were stored (paced): told in its event. */
  carriedDrift?: Drift[];
  /** Per carried resource id, the origin of the report it was seen in: drift of a report stored already is not told again. */
  carriedFrom?: Record<string, ReportOrigin | undefined>;
  /** The caller's per-node budget for node.store-lost (the gateway's); without one it is always written. */
  storeLostEvent?: () => { suppressed: number } | null;
  /**
   * Told when the report came from a store older than the newest generation stored for its node (a
   * restored backup): the gateway says so in the ack, and the host handles its store as lost.
   */
  storeBehind?: (storedGeneration: number) => void;
}

/**
 * A node's store generation after a report, and whether that report came from a rolled back store:
 * the generation only rises, except that a report saying its store was lost starts a new one. A
 * report without a generation (an older host) changes nothing.
 */
export function nextStoreGeneration(stored: number, report: Report): { generation: number; behind: boolean } {
  const g = report.storeGeneration;
  if (g === undefined) return { generation: stored, behind: false };
  if (report.storeLost) return { generation: g, behind: false };
  return g < stored ? { generation: stored, behind: true } : { generation: g, behind: false };
}

/** The one audit event a report's drift makes: counts and the first few entries. */
export function driftSummary(report: Report, suppressed = 0, carried: Drift[] = []): Record<string, unknown> {
  const ids = new Set(report.drift.map((d) => d.id));
  const drift = [...report.drift, ...carried.filter((d) => !ids.has(d.id))];
  return {
    version: report.declarationVersion,
    count: drift.length,
    uncorrected: drift.filter((d) => !d.corrected).length,
    ids: drift.slice(0, DRIFT_EVENT_IDS).map((d) => d.id),
    entries: drift.slice(0, DRIFT_EVENT_ENTRIES),
    ...(suppressed > 0 ? { suppressedEvents: suppressed } : {}),
  };
}

/** Ignores when it was reconciled and where it stands in the host's numbering: what it says, only. */
export function reportHash(report: Report): string {
  const { reconciledAt: _at, origin: _origin, ...rest } = report;
  return contentHash(rest);
}

/** One report to store; hash is reportHash(report) and bodyJson reportBodyJson(report), passed when the caller has them already. */
export interface ReportItem {
  nodeId: string;
  report: Report;
  opts?: RecordReportOptions;
  hash?: string;
  bodyJson?: string;
  /**
   * The caller knows this report differs from the one stored for its node (the gateway holds the hash
   * its link last stored, and this one's is another): the batcher does not read the stored hash first
   * to spare a transaction that would write nothing. Only a hint: the transaction compares again, so a
   * wrong one costs a transaction, never a wrong row.
   */
  knownChanged?: boolean;
}

/** Drift a replaced report saw must be told even when the state it ended in is stored already. */
export const carriesDrift = (opts: RecordReportOptions = {}) => (opts.carriedDrift?.length ?? 0) > 0 && opts.driftEvent !== false;

interface EventRow {
  i: number;
  actor: string;
  action: string;
  node_id: string;
  data: Record<string, unknown>;
}

/**
 * Stores the reports of one batch, in the caller's transaction, as storing them one by one in
 * this order would (recordReport): a report equal to its node's stored one is not written again
 * (its carried drift is still told), the figures on the node are the last written report's,
 * node.store-lost is told when the flag turns on (or a report comes from a store older than the
 * generation stored: rolled back, so lost as well). Several reports of one node are applied in
 * order. A report of a node that no longer exists is not written. Returns, per item, whether
 * it was written.
 */
export async function writeReports(tx: DbOrTx, items: ReportItem[]): Promise<boolean[]> {
  if (items.length === 0) return [];
  const ids = [...new Set(items.map((i) => i.nodeId))].sort();
  // Every node row of the batch locked at once, in id order; its stored hash and origin read with it.
  const locked = await timed("lock nodes, read stored", () => lockNodesWithLatest(tx, ids));
  const decided = performance.now();
  // What each node holds as the batch is applied item by item (in memory: the statements below write the end state).
  const state = new Map(
    locked.map((r) => [
      r.id,
      { hash: r.hash as string | null, bodyHash: r.bodyHash as string | null, storeLost: r.storeLost, generation: Number(r.storeGeneration), origin: r.origin },
    ]),
  );

  const written: boolean[] = [];
  const reports: ReportRow[] = [];
  /** Per node written: its figures, and whether a body differs from the one stored before it (changed). */
  const figures = new Map<
    string,
    {
      id: string;
      version: number;
      owned: number;
      drift: number;
      errors: number;
      store_lost: boolean;
      store_generation: number;
      changed: boolean;
    } & HealthFigures
  >();
  const audit: EventRow[] = [];
  /** Nodes whose store a report not written again found rolled back: only their flag changes. */
  const lostOnly = new Set<string>();
  type Held = NonNullable<ReturnType<typeof state.get>>;
  /** node.store-lost, told when the flag turns on (within the caller's budget). */
  const tellStoreLost = (nodeId: string, report: Report, opts: RecordReportOptions, held: Held, behind: boolean) => {
    if (held.storeLost) return;
    const slot = opts.storeLostEvent ? opts.storeLostEvent() : { suppressed: 0 };
    const data = {
      ...(behind ? { rolledBack: { storeGeneration: report.storeGeneration, acknowledged: held.generation } } : {}),
      ...(slot && slot.suppressed > 0 ? { suppressedEvents: slot.suppressed } : {}),
    };
    if (slot) audit.push({ i: audit.length, actor: `node:${nodeId}`, action: "node.store-lost", node_id: nodeId, data });
  };
  /**
   * A report not written again still speaks for the store it comes from: one older than the
   * generation stored is a store rolled back, so lost (told in the ack, the flag, the event).
   */
  const compareGeneration = (nodeId: string, report: Report, opts: RecordReportOptions, held: Held) => {
    if (!nextStoreGeneration(held.generation, report).behind) return;
    opts.storeBehind?.(held.generation);
    tellStoreLost(nodeId, report, opts, held, true);
    held.storeLost = true;
    const figure = figures.get(nodeId);
    if (figure) figure.store_lost = true;
    else lostOnly.add(nodeId);
  };
  items.forEach((item, i) => {
    const { nodeId, report } = item;
    const hash = item.hash ?? reportHash(report);
    const held = state.get(nodeId);
    if (!held) return void written.push(false);
    // Sent again after a lost ack: stored already, with its events. The very report stored last, sent
    // again, is still compared: a host whose store was restored since sends it with the generation it
    // started from. (An older one's generation is older by right; the newer ones follow it in order.)
    if (storedBefore(report.origin, held.origin)) {
      if (report.origin!.sequence === held.origin!.sequence) compareGeneration(nodeId, report, item.opts ?? {}, held);
      return void written.push(false);
    }
    const opts = withoutStoredDrift(item.opts, held.origin);
    const actor = `node:${nodeId}`;
    if (held.hash === hash) {
      if (carriesDrift(opts))
        audit.push({
          i: audit.length,
          actor,
          action: "node.drift",
          node_id: nodeId,
          data: driftSummary({ ...report, drift: [] }, opts.suppressedDriftEvents, opts.carriedDrift),
        });
      // Equal to the stored one, which was compared when stored: behind only if that one was (its ack may be lost).
      compareGeneration(nodeId, report, opts, held);
      return void written.push(false);
    }
    written.push(true);
    const body = reportBody(report, item.bodyJson);
    const changed = (figures.get(nodeId)?.changed ?? false) || held.bodyHash !== body.hash;
    held.hash = hash;
    held.bodyHash = body.hash;
    if (report.origin) held.origin = report.origin;
    reports.push({ i, nodeId, report, hash, body });
    // The applied version only ever rises (greatest below), so the highest of a node's reports is the one that counts.
    const version = Math.max(report.declarationVersion, figures.get(nodeId)?.version ?? -1);
    const next = nextStoreGeneration(held.generation, report);
    if (next.behind) opts.storeBehind?.(held.generation);
    const storeLost = report.storeLost || next.behind;
    lostOnly.delete(nodeId);
    figures.set(nodeId, {
      id: nodeId,
      version,
      owned: report.owned.length,
      drift: report.drift.filter((d) => !d.corrected).length,
      errors: report.errors.length,
      store_lost: storeLost,
      store_generation: next.generation,
      changed,
      ...healthFigures(report),
    });
    if ((report.drift.length > 0 || (opts.carriedDrift?.length ?? 0) > 0) && opts.driftEvent !== false) {
      audit.push({ i: audit.length, actor, action: "node.drift", node_id: nodeId, data: driftSummary(report, opts.suppressedDriftEvents, opts.carriedDrift) });
    }
    // Told when it turns on, not with every report that still says so.
    if (storeLost) tellStoreLost(nodeId, report, opts, held, next.behind);
    held.storeLost = storeLost;
    held.generation = next.generation;
  });

  timedSince("decide in memory", decided);
  if (reports.length > 0) {
    // Bodies first (each distinct one once), then the small rows naming them (report-store.ts).
    await timed("store bodies", () => storeReportBodies(tx, reports));
    await timed("insert history, upsert latest", () => insertReportRows(tx, reports));
    // The host's word, bounded: never past what it was declared, never back down (node-declares-file.ts
    // lets a node that has not applied its current declaration fetch the previous one's files).
    await timed("update nodes", () =>
      tx.execute(sql`
      update nodes set
        applied_version = greatest(nodes.applied_version, least(v.version, nodes.declared_version)),
        owned_count = v.owned, drift_count = v.drift, error_count = v.errors, store_lost = v.store_lost,
        store_generation = v.store_generation, last_checked_at = now(), updated_at = now(),
        ${HEALTH_FIGURES_SET}
      from jsonb_to_recordset(${JSON.stringify([...figures.values()])}::jsonb)
        as v(id uuid, version int, owned int, drift int, errors int, store_lost boolean, store_generation bigint, changed boolean, ${HEALTH_FIGURES_COLUMNS})
      where nodes.id = v.id`),
    );
    // Each node's history kept to its newest REPORT_HISTORY_PER_NODE, one statement for the batch.
    await timed("prune history", () => pruneReportHistory(tx, [...figures.keys()], REPORT_HISTORY_PER_NODE));
  }
  if (lostOnly.size > 0) {
    await tx.execute(sql`
      update nodes set store_lost = true, updated_at = now()
      where id in (select jsonb_array_elements_text(${JSON.stringify([...lostOnly])}::jsonb)::uuid)`);
  }
  if (audit.length > 0) {
    await timed("insert events", () =>
      tx.execute(sql`
      insert into events (actor, action, node_id, data)
      select actor, action, node_id, data from jsonb_to_recordset(${JSON.stringify(audit)}::jsonb)
        as v(i int, actor text, action text, node_id uuid, data jsonb)
      order by i`),
    );
  }
  // Wakes views: the node when one changed, else "*" (any number, bus.ts).
  const changed = [...figures.keys(), ...lostOnly];
  if (changed.length > 0) await notify(tx, CHANNELS.node, changed.length === 1 ? changed[0]! : MANY_NODES);
  return written;
}

/** The options without the carried drift of reports stored already (their event was told then). */
function withoutStoredDrift(opts: RecordReportOptions = {}, stored: ReportOrigin | null): RecordReportOptions {
  const from = opts.carriedFrom;
  if (!from || !opts.carriedDrift?.length) return opts;
  return { ...opts, carriedDrift: opts.carriedDrift.filter((d) => !storedBefore(from[d.id], stored)) };
}

/**
 * Of these items, the ones that equal their node's stored report and carry nothing to tell (nor come
 * from a store older than the generation stored: writeReports tells that again): one read, no lock.
 */
export async function unchangedReports(db: DbOrTx, items: ReportItem[]): Promise<Set<number>> {
  // Only a node's first item in the batch compares with the stored report (a later one follows the earlier).
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    if (!first.has(item.nodeId)) first.set(item.nodeId, i);
  });
  const candidates = [...first.values()].filter((i) => !carriesDrift(items[i]!.opts) && !items[i]!.knownChanged);
  if (candidates.length === 0) return new Set();
  const stored = await latestHashes(
    db,
    candidates.map((i) => items[i]!.nodeId),
  );
  const byNode = new Map(stored.map((s) => [s.nodeId, s]));
  return new Set(
    candidates.filter((i) => {
      const { nodeId, report, hash } = items[i]!;
      const held = byNode.get(nodeId);
      return held !== undefined && held.hash === (hash ?? reportHash(report)) && !nextStoreGeneration(Number(held.generation), report).behind;
    }),
  );
}

interface Waiting {
  item: ReportItem;
  /** The report's size as JSON text, for the batch's bound. */
  bytes: number;
  resolve: (written: boolean) => void;
  reject: (err: unknown) => void;
  /** Batches this report was in that failed. */
  failures: number;
}

/**
 * A failed batch (a deadlock, a lost connection) is written again after a pause: a host does not
 * send an unacknowledged report again before its next timer, and one batch holds up to a thousand
 * hosts' reports. Safe to repeat (the transaction rolled back; an equal hash is not written twice).
 * After REPORT_TRIES the callers fail, as the single write failed its one caller before.
 */
const REPORT_TRIES = 3;

export interface ReportBatcherOptions {
  /** How long the first report of a batch waits for others (default 50 ms). */
  windowMs?: number;
  /** A batch this large is written at once (default 1,000). */
  maxItems?: number;
  /** ...or this many bytes of reports (default 16 MiB: a report may be up to a frame, 1 MiB). */
  maxBytes?: number;
  /**
   * Batches written at once, on disjoint nodes (default 2): one batch's statements wait on the
   * database and on the event loop (a fleet push's sends, the reports' parsing), the other's run.
   */
  concurrency?: number;
  /**
   * Report bodies no report names any more (the history scrolled past them) are deleted at most this
   * often, after a batch, between batches (default 10 minutes; 0: after every batch).
   */
  bodySweepMs?: number;
}

/**
 * One gateway's reports, batched. Each caller awaits whether its report was written. Up to
 * `concurrency` batches are written at once, on disjoint nodes: a report waits while an earlier
 * report of its node is in a batch being written (or waiting to be retried), so a node's reports are
 * applied in the order they came; under load the next batches grow while the others commit. Reports
 * equal to the stored ones are answered after one read, without a transaction (a reconnecting fleet).
 * A failed batch is written again after a pause (REPORT_TRIES in all).
 */
export class ReportBatcher {
  private waiting: Waiting[] = [];
  private waitingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Per node, its reports in a batch being written or waiting for a retry: later ones of the node wait. */
  private held = new Map<string, number>();
  /** Batches being written, and the body sweep while it runs. */
  private running = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly windowMs: number;
  private readonly maxItems: number;
  private readonly maxBytes: number;
  private readonly concurrency: number;
  private readonly bodySweepMs: number;
  private lastSweep = Date.now();
  private batchesSwept = 0;
  /** Transactions written, for tests and logs. */
  batches = 0;
  /** Reads of stored hashes before a transaction (skipped when every report of a batch is known changed), for tests. */
  reads = 0;

  constructor(
    private readonly deps: Pick<Deps, "db" | "log">,
    opts: ReportBatcherOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? 50;
    this.maxItems = opts.maxItems ?? 1000;
    this.maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    this.concurrency = Math.max(1, opts.concurrency ?? 2);
    this.bodySweepMs = opts.bodySweepMs ?? 10 * 60_000;
  }

  /** Stores one report with the others of its batch; false when it equals the stored one (nothing written). */
  write(item: ReportItem): Promise<boolean> {
    return new Promise((resolve, reject) => {
      // Serialised once; hashed only if it is written (writeReports): a reconnecting fleet's equal reports are not.
      const bodyJson = item.bodyJson ?? reportBodyJson(item.report);
      const bytes = bodyJson.length;
      this.waiting.push({ item: { ...item, hash: item.hash ?? reportHash(item.report), bodyJson }, bytes, resolve, reject, failures: 0 });
      this.waitingBytes += bytes;
      if (this.waiting.length >= this.maxItems || this.waitingBytes >= this.maxBytes) this.start();
      else if (!this.timer) this.timer = setTimeout(() => this.start(), this.windowMs);
    });
  }

  /**
   * Writes everything asked for so far; resolves once nothing is being written and nothing waiting
   * can be (a report whose node's earlier one awaits its retry goes with that retry).
   */
  flush(): Promise<void> {
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.start();
    return idle;
  }

  /** Writes what waits now, without a promise to wait on (a report past the bounds, the window's timer, a retry). */
  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pump();
  }

  /** Starts batches while fewer than `concurrency` are being written and some report can go; then, idle, the sweep. */
  private pump(): void {
    while (this.running < this.concurrency) {
      const batch = this.take();
      if (batch.length === 0) break;
      this.running++;
      void this.writeBatch(batch).finally(() => {
        this.running--;
        this.pump();
      });
    }
    // Nothing running, so the loop stopped because nothing waiting can go (none waits, or its nodes await a retry): idle.
    if (this.running > 0) return;
    // Once after batches were written since the last sweep, when it is bodySweepMs old.
    if (this.batches > this.batchesSwept && Date.now() - this.lastSweep >= this.bodySweepMs) {
      this.batchesSwept = this.batches;
      this.running++;
      void this.sweepBodies().finally(() => {
        this.running--;
        this.pump();
      });
      return;
    }
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * The next batch, in arrival order: at most maxItems and maxBytes (at least one report, however
   * large), skipping every report of a node held by another batch (and so its later ones too).
   */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const skipped = new Set<string>();
    let bytes = 0;
    for (const w of this.waiting) {
      const node = w.item.nodeId;
      const full = batch.length >= this.maxItems || (batch.length > 0 && bytes + w.bytes > this.maxBytes);
      if (full || skipped.has(node) || this.held.has(node)) {
        // A node with a report left out keeps its later reports out too: they go after it.
        skipped.add(node);
        rest.push(w);
        continue;
      }
      batch.push(w);
      bytes += w.bytes;
    }
    if (batch.length === 0) return batch;
    this.waiting = rest;
    this.waitingBytes -= bytes;
    for (const w of batch) this.hold(w.item.nodeId, 1);
    return batch;
  }

  private hold(nodeId: string, n: number) {
    const count = (this.held.get(nodeId) ?? 0) + n;
    if (count > 0) this.held.set(nodeId, count);
    else this.held.delete(nodeId);
  }

  private async writeBatch(batch: Waiting[]): Promise<void> {
    try {
      const items = batch.map((w) => w.item);
      // A fleet answering a change sends reports known to differ from the stored ones: no read for them.
      const unchanged = items.some((item) => !item.knownChanged && !carriesDrift(item.opts))
        ? await timed("read unchanged (before the transaction)", () => (this.reads++, unchangedReports(this.deps.db, items)))
        : new Set<number>();
      const rest = items.map((item, i) => ({ item, i })).filter(({ i }) => !unchanged.has(i));
      const written = new Array<boolean>(items.length).fill(false);
      if (rest.length > 0) {
        const result = await timed("transaction (all of it)", () =>
          this.deps.db.transaction((tx) =>
            writeReports(
              tx,
              rest.map((r) => r.item),
            ),
          ),
        );
        this.batches++;
        rest.forEach(({ i }, k) => (written[i] = result[k]!));
      }
      for (const w of batch) this.hold(w.item.nodeId, -1);
      batch.forEach((w, i) => w.resolve(written[i]!));
    } catch (err) {
      for (const w of batch) w.failures++;
      this.deps.log.warn({ reports: batch.length, reason: (err as Error).message }, "report batch not stored; will retry");
      const retried = batch.filter((w) => w.failures < REPORT_TRIES);
      for (const w of batch)
        if (w.failures >= REPORT_TRIES) {
          this.hold(w.item.nodeId, -1);
          w.reject(err);
        }
      this.retry(retried);
    }
  }

  /** Deletes unnamed report bodies when the last sweep is bodySweepMs old (one transaction; a failure waits for the next). */
  private async sweepBodies(): Promise<void> {
    this.lastSweep = Date.now();
    try {
      const deleted = await timed("sweep report bodies", () => pruneReportBodies(this.deps.db));
      if (deleted > 0) this.deps.log.info({ deleted }, "report bodies no report names deleted");
    } catch (err) {
      this.deps.log.warn({ reason: (err as Error).message }, "report body sweep failed; will try again later");
    }
  }

  /**
   * Puts a failed batch's reports back, ahead of newer ones, and writes them after a pause; their
   * nodes stay held meanwhile, so no later report of theirs is written first.
   */
  private retry(batch: Waiting[]) {
    if (batch.length === 0) return;
    setTimeout(
      () => {
        for (const w of batch) this.hold(w.item.nodeId, -1);
        this.waiting.unshift(...batch);
        this.waitingBytes += batch.reduce((n, w) => n + w.bytes, 0);
        this.start();
      },
      retryDelayMs(Math.max(...batch.map((w) => w.failures)), 200),
    ).unref();
  }
}
