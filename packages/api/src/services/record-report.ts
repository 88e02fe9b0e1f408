// Stores what a host reported: the latest per node, a bounded history, the summary
// figures on the node, and one summary audit event for its drift (the entries stay
// with the report). An unchanged report is not written again (its hash ignores the reconcile time): it
// costs one read, no transaction; the gateway remembers the hash per link and then skips even that.
import { and, eq, lt, sql, desc } from "drizzle-orm";
import { latestReports, nodes, reportHistory, notify, CHANNELS } from "@mesh/db";
import type { Drift, Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { contentHash } from "../compile/hash";
import { recordEvent } from "./record-event";

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
  /** The caller's per-node budget for node.store-lost (the gateway's); without one it is always written. */
  storeLostEvent?: () => { suppressed: number } | null;
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

export function reportHash(report: Report): string {
  const { reconciledAt: _at, ...rest } = report;
  return contentHash(rest);
}

/** Returns false when the report equals the last one stored (nothing written). */
export async function recordReport(deps: Pick<Deps, "db" | "log">, nodeId: string, report: Report, opts: RecordReportOptions = {}): Promise<boolean> {
  const hash = reportHash(report);
  const carriesDrift = (opts.carriedDrift?.length ?? 0) > 0 && opts.driftEvent !== false;
  if (!carriesDrift) {
    // The common case (a timer report, a reconnect): equal to the stored one, no lock, no transaction.
    const [stored] = await deps.db.select({ hash: latestReports.hash }).from(latestReports).where(eq(latestReports.nodeId, nodeId));
    if (stored?.hash === hash) return false;
  }
  return deps.db.transaction(async (tx) => {
    const [latest] = await tx.select({ hash: latestReports.hash }).from(latestReports).where(eq(latestReports.nodeId, nodeId)).for("update");
    if (latest?.hash === hash) {
      // Drift a replaced report saw is still told, though the state it ended in was stored already.
      if ((opts.carriedDrift?.length ?? 0) > 0 && opts.driftEvent !== false) {
        await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.drift", nodeId, data: driftSummary({ ...report, drift: [] }, opts.suppressedDriftEvents, opts.carriedDrift) });
      }
      return false;
    }
    const row = { nodeId, declarationVersion: report.declarationVersion, hash, body: report };
    await tx
      .insert(latestReports)
      .values(row)
      .onConflictDoUpdate({ target: latestReports.nodeId, set: { declarationVersion: row.declarationVersion, hash, body: report, receivedAt: sql`now()` } });
    await tx.insert(reportHistory).values(row);
    const keep = tx
      .select({ id: reportHistory.id })
      .from(reportHistory)
      .where(eq(reportHistory.nodeId, nodeId))
      .orderBy(desc(reportHistory.id))
      .limit(REPORT_HISTORY_PER_NODE);
    const [oldestKept] = await tx.select({ id: sql<number>`min(k.id)` }).from(keep.as("k"));
    if (oldestKept?.id) await tx.delete(reportHistory).where(and(eq(reportHistory.nodeId, nodeId), lt(reportHistory.id, Number(oldestKept.id))));
    // Only a report that says its store is lost needs the flag it replaces (told on turning on).
    const [before] = report.storeLost ? await tx.select({ storeLost: nodes.storeLost }).from(nodes).where(eq(nodes.id, nodeId)).for("update") : [];
    await tx
      .update(nodes)
      .set({
        // The host's word, bounded: never past what it was declared, never back down (node-declares-file.ts
        // lets a node that has not applied its current declaration fetch the previous one's files).
        appliedVersion: sql`greatest(${nodes.appliedVersion}, least(${report.declarationVersion}, ${nodes.declaredVersion}))`,
        ownedCount: report.owned.length,
        driftCount: report.drift.filter((d) => !d.corrected).length,
        errorCount: report.errors.length,
        storeLost: report.storeLost,
        lastCheckedAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(eq(nodes.id, nodeId));
    if ((report.drift.length > 0 || (opts.carriedDrift?.length ?? 0) > 0) && opts.driftEvent !== false) {
      await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.drift", nodeId, data: driftSummary(report, opts.suppressedDriftEvents, opts.carriedDrift) });
    }
    // Told when it turns on, not with every report that still says so.
    if (report.storeLost && before && !before.storeLost) {
      const slot = opts.storeLostEvent ? opts.storeLostEvent() : { suppressed: 0 };
      if (slot) await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.store-lost", nodeId, ...(slot.suppressed > 0 ? { data: { suppressedEvents: slot.suppressed } } : {}) });
    }
    await notify(tx, CHANNELS.node, nodeId);
    return true;
  });
}

