// A node's health, defined once (issue 13): the API computes it in SQL from the node's own row, so
// the fleet list filters, sorts and counts by it set-based, and the dashboard only renders it.
// See docs/decisions/0029-node-health.md.
import { sql } from "drizzle-orm";
import { nodes } from "@mesh/db";

/**
 * - `pending`: enrolled, never linked (no link seen, no report heard).
 * - `conflicted`: two roles declare one resource differently; nothing new is pushed to it.
 * - `stale`: not linked now, or linked but no report or check heard for STALE_AFTER_SECONDS.
 * - `failing`: it refused its current declaration, or the latest report of its current declaration
 *   has errors or skipped resources.
 * - `applying`: linked, its current declaration not reported applied yet.
 * - `drifted`: applied, with uncorrected drift.
 * - `healthy`: applied, nothing failed, nothing drifted, heard from recently.
 * A node that is a replacement claim (state `pending`), retiring, retired or revoked has no health
 * (null): its state says what it is.
 */
export const NODE_HEALTHS = ["pending", "conflicted", "stale", "failing", "applying", "drifted", "healthy"] as const;
export type NodeHealth = (typeof NODE_HEALTHS)[number];

/**
 * A linked host reports after every reconcile (its timer is 300 s by default) and an unchanged report
 * is still heard ("last checked", batched once a minute): three timer periods without one is a host
 * whose timer or reconciler is stuck.
 */
export const STALE_AFTER_SECONDS = 900;

/** The health of the `nodes` row in scope: one CASE over its own columns (no join, no subquery). */
export const nodeHealth = sql<NodeHealth | null>`(case
  when ${nodes.state} not in ('enrolled', 'disconnected') then null
  when jsonb_array_length(${nodes.conflicts}) > 0 then 'conflicted'
  when ${nodes.state} = 'disconnected' and ${nodes.lastSeenAt} is null and ${nodes.lastCheckedAt} is null then 'pending'
  when ${nodes.state} = 'disconnected' then 'stale'
  when greatest(${nodes.lastCheckedAt}, ${nodes.lastSeenAt}) < now() - make_interval(secs => ${sql.raw(String(STALE_AFTER_SECONDS))}) then 'stale'
  when ${nodes.rejectedVersion} >= ${nodes.declaredVersion} then 'failing'
  when ${nodes.appliedVersion} < ${nodes.declaredVersion} then 'applying'
  when ${nodes.errorCount} > 0 or ${nodes.skippedCount} > 0 then 'failing'
  when ${nodes.driftCount} > 0 then 'drifted'
  else 'healthy'
end)`;

/** Worst first: sorting by health ascending puts the nodes that need someone at the top (no health last). */
export const nodeHealthRank = sql<number>`(case ${nodeHealth}
  when 'conflicted' then 0 when 'failing' then 1 when 'stale' then 2 when 'drifted' then 3
  when 'applying' then 4 when 'pending' then 5 when 'healthy' then 6 else 7 end)`;
