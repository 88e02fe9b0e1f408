// The per-report write as it was before reports were batched (one transaction per report, several
// statements each): the oracle report-batch.test.ts compares writeReports with, and the baseline
// report-batch.measure.test.ts measures it against. Not used by the product.
import { and, desc, eq, lt, sql } from "drizzle-orm";
import { latestReports, nodes, notify, reportBodies, reportHistory, CHANNELS } from "@mesh/db";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { recordEvent } from "../services/record-event";
import { REPORT_HISTORY_PER_NODE, driftSummary, nextStoreGeneration, reportHash, type RecordReportOptions } from "../services/report-batch";
import { reportBody } from "../services/report-store";

export async function recordReportOneByOne(deps: Pick<Deps, "db">, nodeId: string, report: Report, opts: RecordReportOptions = {}): Promise<boolean> {
  const hash = reportHash(report);
  const carriesDrift = (opts.carriedDrift?.length ?? 0) > 0 && opts.driftEvent !== false;
  if (!carriesDrift) {
    const [stored] = await deps.db.select({ hash: latestReports.hash }).from(latestReports).where(eq(latestReports.nodeId, nodeId));
    if (stored?.hash === hash) return false;
  }
  return deps.db.transaction(async (tx) => {
    const [latest] = await tx.select({ hash: latestReports.hash }).from(latestReports).where(eq(latestReports.nodeId, nodeId)).for("update");
    if (latest?.hash === hash) {
      if ((opts.carriedDrift?.length ?? 0) > 0 && opts.driftEvent !== false) {
        await recordEvent(tx, {
          actor: `node:${nodeId}`,
          action: "node.drift",
          nodeId,
          data: driftSummary({ ...report, drift: [] }, opts.suppressedDriftEvents, opts.carriedDrift),
        });
      }
      return false;
    }
    const body = reportBody(report);
    await tx
      .insert(reportBodies)
      .values({ hash: body.hash, body: JSON.parse(body.json) })
      .onConflictDoNothing();
    const parts = {
      declarationVersion: report.declarationVersion,
      hash,
      bodyHash: body.hash,
      reconciledAt: report.reconciledAt,
      origin: report.origin ?? null,
      storeGeneration: report.storeGeneration ?? null,
    };
    const row = { nodeId, ...parts };
    await tx
      .insert(latestReports)
      .values(row)
      .onConflictDoUpdate({ target: latestReports.nodeId, set: { ...parts, receivedAt: sql`now()` } });
    await tx.insert(reportHistory).values(row);
    const keep = tx
      .select({ id: reportHistory.id })
      .from(reportHistory)
      .where(eq(reportHistory.nodeId, nodeId))
      .orderBy(desc(reportHistory.id))
      .limit(REPORT_HISTORY_PER_NODE);
    const [oldestKept] = await tx.select({ id: sql<number>`min(k.id)` }).from(keep.as("k"));
    if (oldestKept?.id) await tx.delete(reportHistory).where(and(eq(reportHistory.nodeId, nodeId), lt(reportHistory.id, Number(oldestKept.id))));
    const asks = report.storeLost || report.storeGeneration !== undefined;
    const [before] = asks
      ? await tx.select({ storeLost: nodes.storeLost, storeGeneration: nodes.storeGeneration }).from(nodes).where(eq(nodes.id, nodeId)).for("update")
      : [];
    const next = nextStoreGeneration(Number(before?.storeGeneration ?? 0), report);
    if (next.behind) opts.storeBehind?.(Number(before!.storeGeneration));
    const storeLost = report.storeLost || next.behind;
    await tx
      .update(nodes)
      .set({
        appliedVersion: sql`greatest(${nodes.appliedVersion}, least(${report.declarationVersion}, ${nodes.declaredVersion}))`,
        ownedCount: report.owned.length,
        driftCount: report.drift.filter((d) => !d.corrected).length,
        errorCount: report.errors.length,
        storeLost,
        ...(before ? { storeGeneration: next.generation } : {}),
        lastCheckedAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(eq(nodes.id, nodeId));
    if ((report.drift.length > 0 || (opts.carriedDrift?.length ?? 0) > 0) && opts.driftEvent !== false) {
      await recordEvent(tx, {
        actor: `node:${nodeId}`,
        action: "node.drift",
        nodeId,
        data: driftSummary(report, opts.suppressedDriftEvents, opts.carriedDrift),
      });
    }
    if (storeLost && before && !before.storeLost) {
      const slot = opts.storeLostEvent ? opts.storeLostEvent() : { suppressed: 0 };
      const data = {
        ...(next.behind ? { rolledBack: { storeGeneration: report.storeGeneration, acknowledged: Number(before.storeGeneration) } } : {}),
        ...(slot && slot.suppressed > 0 ? { suppressedEvents: slot.suppressed } : {}),
      };
      if (slot) await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.store-lost", nodeId, ...(Object.keys(data).length > 0 ? { data } : {}) });
    }
    await notify(tx, CHANNELS.node, nodeId);
    return true;
  });
}
