// Stores what a host reported: the latest per node, a bounded history, the summary
// figures on the node, and one summary audit event for its drift (the entries stay
// with the report). An unchanged report is not written again (its hash ignores the reconcile time): it
// costs one read, no transaction; the gateway remembers the hash per link and then skips even that.
// One report is a batch of one (report-batch.ts): the gateway writes them in batches, others one by one.
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { reportHash, unchangedReports, writeReports, type RecordReportOptions } from "./report-batch";

export { DRIFT_EVENT_ENTRIES, DRIFT_EVENT_IDS, REPORT_HISTORY_PER_NODE, driftSummary, reportHash, type RecordReportOptions } from "./report-batch";

/** Returns false when the report equals the last one stored (nothing written). */
export async function recordReport(deps: Pick<Deps, "db" | "log">, nodeId: string, report: Report, opts: RecordReportOptions = {}): Promise<boolean> {
  const item = { nodeId, report, opts, hash: reportHash(report) };
  // The common case (a timer report, a reconnect): equal to the stored one, no lock, no transaction.
  if ((await unchangedReports(deps.db, [item])).size > 0) return false;
  const [written] = await deps.db.transaction((tx) => writeReports(tx, [item]));
  return written!;
}
