// The fleet as CSV (issue 13): every node the filter matches, not only the page shown, read page by
// page (EXPORT_PAGE nodes a query, the list's own filter and sort) and written out as it is read.
import type { Deps } from "../deps";
import { listNodes, type NodeFilter } from "./list-nodes";
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

/** RFC 4180: quoted when it must be; a leading =, +, - or @ is neutralised (spreadsheet formulas). */
export function csvField(value: unknown): string {
  let s = value === null || value === undefined ? "" : value instanceof Date ? value.toISOString() : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The header line, then one line per matching node, a page at a time. */
export async function* exportNodesCsv(deps: Pick<Deps, "db">, filter: NodeFilter, pageSize = EXPORT_PAGE): AsyncGenerator<string> {
  yield CSV_COLUMNS.join(",") + "\r\n";
  for (let offset = 0; ; offset += pageSize) {
    const { items } = await listNodes(deps, { ...filter, limit: pageSize, offset });
    if (items.length === 0) return;
    yield items
      .map((n) =>
        [
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
        ]
          .map(csvField)
          .join(",") + "\r\n",
      )
      .join("");
    if (items.length < pageSize) return;
  }
}
