// Link nonces already accepted, shared by every instance through the database, so
// an auth header accepted by one instance is refused by all the others.
import { lt, sql } from "drizzle-orm";
import { linkNoncesUsed, type DbOrTx } from "@mesh/db";

export interface UsedNonces {
  /** true the first time a nonce is claimed by any instance, false ever after (until it expires). */
  claim(nonce: string, expiresAt: Date): Promise<boolean>;
}

const PRUNE_EVERY_MS = 60_000;

export function databaseUsedNonces(db: DbOrTx, now: () => number = Date.now): UsedNonces {
  let prunedAt = 0;
  return {
    async claim(nonce, expiresAt) {
      const t = now();
      // Expired rows cannot matter (the MAC'd expiry refuses their nonces first); one
      // indexed range delete a minute per instance keeps the table at one TTL of rows.
      if (t - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = t;
        await db.delete(linkNoncesUsed).where(lt(linkNoncesUsed.expiresAt, sql`now()`));
      }
      const inserted = await db
        .insert(linkNoncesUsed)
        .values({ nonce, expiresAt })
        .onConflictDoNothing({ target: linkNoncesUsed.nonce })
        .returning({ nonce: linkNoncesUsed.nonce });
      return inserted.length === 1;
    },
  };
}

/** One process only (tests, a single instance without a database at hand). */
export function memoryUsedNonces(now: () => number = Date.now): UsedNonces {
  const used = new Map<string, number>();
  return {
    async claim(nonce, expiresAt) {
      const t = now();
      for (const [n, expires] of used) if (expires <= t) used.delete(n);
      if (used.has(nonce)) return false;
      used.set(nonce, expiresAt.getTime());
      return true;
    },
  };
}
