// The rollout lease: one row in Postgres naming the control-plane instance that runs rollouts and until
// when (the database's clock). Taken when free or expired, renewed by its owner every tick while a rollout
// runs (an idle tick takes nothing: rollout-worker.ts), given up at a clean stop; an instance that dies loses
// it at expiry and another takes over. Only the holder advances
// rollouts; the row checks in advance.ts keep a wave from being released twice even if two ever overlapped.
import { sql } from "drizzle-orm";
import { rolloutLease, type DbOrTx, rowsOf } from "@mesh/db";

export const ROLLOUT_LEASE = "rollouts";

/** Takes or renews the lease for `owner` for ttlMs; true when owner holds it now. One statement. */
export async function takeLease(db: DbOrTx, owner: string, ttlMs: number): Promise<boolean> {
  const rows = rowsOf<{ owner: string }>(
    await db.execute(sql`
      insert into ${rolloutLease} (name, owner, expires_at) values (${ROLLOUT_LEASE}, ${owner}, now() + make_interval(secs => ${ttlMs / 1000}))
      on conflict (name) do update set owner = excluded.owner, expires_at = excluded.expires_at
      where ${rolloutLease.owner} = excluded.owner or ${rolloutLease.expiresAt} < now()
      returning owner`),
  );
  return rows.length > 0;
}

/** Gives the lease up (a clean stop), so another instance takes over at its next tick, not at expiry. */
export async function releaseLease(db: DbOrTx, owner: string): Promise<void> {
  await db.execute(sql`delete from ${rolloutLease} where name = ${ROLLOUT_LEASE} and owner = ${owner}`);
}
