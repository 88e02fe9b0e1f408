// The fleet as CSV (issue 13): every node the filter matches, not only the page shown, read page by
// page (EXPORT_PAGE nodes a query, the list's own filter and sort) in one snapshot, and written out as it is read.
import type { Deps } from "../deps";
import { listNodePage, type NodeFilter } from "./list-nodes";
import { csvLine } from "./csv";
import { shortId } from "./node-name";

export const EXPORT_PAGE = 500;

export const CSV_COLUMNS = [
  "id",
  "short_id",
  "name",
  "hostname",
  "state",
  "health",
  "labels",
  "roles",
  "declared_version",
  "applied_version",
  "rejected_version",
  "errors",
  "skipped",
  "drift",
  "conflicts",
  "last_seen_at",
  "last_checked_at",
  "last_changed_at",
  "host_version",
] as const;

/** One node's line, in CSV_COLUMNS' order. */
function nodeLine(n: Awaited<ReturnType<typeof listNodePage>>[number]): string {
  return csvLine([
    n.id,
    shortId(n.id),
    n.name,
    n.hostname,
    n.state,
    n.health,
    Object.entries(n.labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(", "),
    (n.roles ?? []).join(" "),
    n.declaredVersion,
    n.appliedVersion,
    n.rejectedVersion,
    n.errorCount,
    n.skippedCount,
    n.driftCount,
    n.conflictCount,
    n.lastSeenAt,
    n.lastCheckedAt,
    n.lastChangedAt,
    n.hostVersion,
  ]);
}

/**
 * The header line, then one chunk of lines per page. Every page is read in ONE read-only REPEATABLE READ
 * transaction, so the pages are one snapshot of the fleet: a node renamed, re-sorted, added or forgotten
 * while the export runs is neither skipped nor written twice (pages apart, OFFSET would do both), and no
 * page counts the total. The transaction reads ahead of the caller, page after page, and ends as soon
 * as the last is read: a slow download holds lines in memory (the export's size at most), never a
 * database connection or a snapshot.
 */
export async function* exportNodesCsv(deps: Pick<Deps, "db">, filter: NodeFilter, pageSize = EXPORT_PAGE): AsyncGenerator<string> {
  yield csvLine(CSV_COLUMNS);
  const pages: string[] = [];
  let done = false;
  let failed: { error: unknown } | undefined;
  let stopped = false;
  let wake: (() => void) | undefined;
  const reading = deps.db
    .transaction(
      async (tx) => {
        for (let offset = 0; !stopped; offset += pageSize) {
          const items = await listNodePage(tx, { ...filter, limit: pageSize, offset });
          if (items.length > 0) pages.push(items.map(nodeLine).join(""));
          wake?.();
          if (items.length < pageSize) return;
        }
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    )
    .then(
      () => void (done = true),
      (error: unknown) => void ((failed = { error }), (done = true)),
    )
    .finally(() => wake?.());
  try {
    for (;;) {
      if (pages.length > 0) yield pages.shift()!;
      else if (failed) throw failed.error;
      else if (done) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    // The caller stopped reading (or the read failed): the transaction ends at its next page.
    stopped = true;
    await reading;
  }
}
