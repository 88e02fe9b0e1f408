// Stores what a host reported: the latest per node, a bounded history, the summary
// figures on the node, and one summary audit event for its drift (the entries stay
// with the report). An unchanged report is not written again (its hash ignores the reconcile time): it
// costs one read, no transaction; the gateway remembers the hash per link and then skips even that.
// One report is a batch of one (report-batch.ts): the gateway writes them in batches, others one by one.
import { eq } from "drizzle-orm";
import { latestReports } from "@mesh/db";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { carriesDrift, reportHash, writeReports, type RecordReportOptions } from "./report-batch";

export { DRIFT_EVENT_ENTRIES, DRIFT_EVENT_IDS, REPORT_HISTORY_PER_NODE, driftSummary, reportHash, type RecordReportOptions } from "./report-batch";

/** Returns false when the report equals the last one stored (nothing written). */
export async function recordReport(deps: Pick<Deps, "db" | "log">, nodeId: string, report: Report, opts: RecordReportOptions = {}): Promise<boolean> {
  const hash = reportHash(report);
  if (!carriesDrift(opts)) {
    // The common case (a timer report, a reconnect): equal to the stored one, no lock, no transaction.
    const [stored] = await deps.db.select({ hash: latestReports.hash }).from(latestReports).where(eq(latestReports.nodeId, nodeId));
    if (stored?.hash === hash) return false;
  }
  const [written] = await deps.db.transaction((tx) => writeReports(tx, [{ nodeId, report, opts, hash }]));
  return written!;
}
