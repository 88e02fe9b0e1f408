// The figures a stored report adds to its node for health and "last changed" (issue 13), kept apart
// from report-batch.ts: that file only spreads healthFigures(report) into each node's row of figures
// and splices these two fragments into its one UPDATE of the nodes (no statement of their own).
import { sql } from "drizzle-orm";
import type { Report } from "@mesh/protocol";

export interface HealthFigures {
  skipped: number;
  rejected: number | null;
}

export const healthFigures = (report: Report): HealthFigures => ({ skipped: report.skipped?.length ?? 0, rejected: report.rejectedVersion ?? null });

/** The recordset's extra columns, named as healthFigures names them. */
export const HEALTH_FIGURES_COLUMNS = sql.raw("skipped int, rejected int");

/**
 * Last changed: when a written report's body (what the host owns, its drift, errors and skips) differs from the
 * one stored before it (the batch's `changed`); a report that only moves to a new version with the same body is not
 * a change on the machine.
 */
export const HEALTH_FIGURES_SET = sql.raw(
  "skipped_count = v.skipped, rejected_version = v.rejected, last_changed_at = case when v.changed then now() else nodes.last_changed_at end",
);
