// A fleet-wide sweep run once per control plane, however many instances tick: a run locks its row in
// sweep_leases (FOR UPDATE SKIP LOCKED: another instance's run in progress means this one skips) and,
// in the same transaction, does its work and stamps the row. The alert evaluator does the same with its
// own row (alert_cursor, which also carries the events read so far: evaluate-alerts.ts).
// A run that is not due (the last one is younger than its interval) is decided on a plain read first: no
// row lock, no transaction id, nothing written (issue 11: an idle control plane writes ≤ 1 row/s).
import { sql } from "drizzle-orm";
import type { DbOrTx, Tx } from "@mesh/db";
import { rowsOf } from "@mesh/db";

export interface SweepWindow {
  /** When the sweep last ran (any instance). */
  since: Date;
  /** The database's now for this run: the time every comparison in it uses. */
  now: Date;
}

/**
 * Runs `work` under the named lease; null when another instance holds it, when the last run (by any
 * instance) is younger than `minIntervalMs`, or when the lease row is missing (a sweep with no row never runs).
 */
export async function withSweepLease<T>(
  db: DbOrTx,
  name: string,
  opts: { minIntervalMs?: number },
  work: (tx: Tx, w: SweepWindow) => Promise<T>,
): Promise<T | null> {
  // Not due: known without locking the row (a lock marks the row: a write, every tick of every instance).
  if (opts.minIntervalMs) {
    const [last] = rowsOf<{ young: boolean }>(
      await db.execute(sql`select evaluated_at > now() - make_interval(secs => ${opts.minIntervalMs / 1000}) as young from sweep_leases where name = ${name}`),
    );
    if (!last || last.young) return null;
  }
  return db.transaction(async (tx) => {
    const [lease] = rowsOf<{ evaluated_at: string | Date; now: string | Date }>(
      await tx.execute(sql`select evaluated_at, now() as now from sweep_leases where name = ${name} for update skip locked`),
    );
    if (!lease) return null;
    const w = { since: new Date(lease.evaluated_at), now: new Date(lease.now) };
    if (opts.minIntervalMs && w.now.getTime() - w.since.getTime() < opts.minIntervalMs) return null;
    const result = await work(tx, w);
    await tx.execute(sql`update sweep_leases set evaluated_at = ${w.now.toISOString()}::timestamptz where name = ${name}`);
    return result;
  });
}
