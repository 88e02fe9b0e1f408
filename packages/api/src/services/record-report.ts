// Stores what a host reported: the latest per node, a bounded history, the summary
// figures on the node, and an audit event per drift. An unchanged report is not
// written again (its hash ignores the reconcile time).
import { and, eq, lt, sql, desc } from "drizzle-orm";
import { latestReports, nodes, reportHistory, notify, CHANNELS } from "@mesh/db";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { contentHash } from "../compile/hash";
import { recordEvent } from "./record-event";

export const REPORT_HISTORY_PER_NODE = 20;

export function reportHash(report: Report): string {
  const { reconciledAt: _at, ...rest } = report;
  return contentHash(rest);
}

/** Returns false when the report equals the last one stored (nothing written). */
export async function recordReport(deps: Pick<Deps, "db" | "log">, nodeId: string, report: Report): Promise<boolean> {
  const hash = reportHash(report);
  return deps.db.transaction(async (tx) => {
    const [latest] = await tx.select({ hash: latestReports.hash }).from(latestReports).where(eq(latestReports.nodeId, nodeId)).for("update");
    if (latest?.hash === hash) return false;
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
    await tx
      .update(nodes)
      .set({
        appliedVersion: report.declarationVersion,
        ownedCount: report.owned.length,
        driftCount: report.drift.filter((d) => !d.corrected).length,
        errorCount: report.errors.length,
        storeLost: report.storeLost,
        lastSeenAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(eq(nodes.id, nodeId));
    for (const drift of report.drift) {
      await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.drift", nodeId, data: drift });
    }
    if (report.storeLost) await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.store-lost", nodeId });
    await notify(tx, CHANNELS.node, nodeId);
    return true;
  });
}

