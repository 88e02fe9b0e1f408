// Link nonces already accepted, shared by every instance through the database, so
// an auth header accepted by one instance is refused by all the others.
import { lt, sql } from "drizzle-orm";
import { linkNoncesUsed, type DbOrTx } from "@mesh/db";
import { KeyBatcher } from "../batching/key-batcher";

export interface UsedNonces {
  /** true the first time a nonce is claimed by any instance, false ever after (until it expires). */
  claim(nonce: string, expiresAt: Date): Promise<boolean>;
}

const PRUNE_EVERY_MS = 60_000;

/**
 * Claims made within a few milliseconds of each other are one INSERT (a fleet re-linking after a
 * restart would otherwise be one committed write per host). A nonce asked twice in one batch is
 * claimed once and both askers share the answer, so callers claim each nonce locally first
 * (ChallengeIssuer does) and only a first local claim reaches the database.
 */
export function databaseUsedNonces(db: DbOrTx, now: () => number = Date.now): UsedNonces {
  let prunedAt = 0;
  /** The expiry each waiting nonce was claimed with (the batch's rows need it). */
  const expiries = new Map<string, Date>();
  const claims = new KeyBatcher<string, boolean>(async (nonces) => {
    const rows = nonces.map((nonce) => ({ nonce, expiresAt: expiries.get(nonce)! }));
    for (const nonce of nonces) expiries.delete(nonce);
    const t = now();
    // Expired rows cannot matter (the MAC'd expiry refuses their nonces first); one
    // indexed range delete a minute per instance keeps the table at one TTL of rows.
    if (t - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = t;
      await db.delete(linkNoncesUsed).where(lt(linkNoncesUsed.expiresAt, sql`now()`));
    }
    const inserted = await db
      .insert(linkNoncesUsed)
      .values(rows)
      .onConflictDoNothing({ target: linkNoncesUsed.nonce })
      .returning({ nonce: linkNoncesUsed.nonce });
    const fresh = new Set(inserted.map((r) => r.nonce));
    return new Map(nonces.map((n) => [n, fresh.has(n)]));
  });
  return {
    async claim(nonce, expiresAt) {
      expiries.set(nonce, expiresAt);
      return (await claims.load(nonce)) === true;
    },
  };
}

/** One process only (tests, a single instance without a database at hand). */
export function memoryUsedNonces(now: () => number = Date.now): UsedNonces {
  const used = new Map<string, number>();
  let prunedAt = 0;
  return {
    async claim(nonce, expiresAt) {
      const t = now();
      // Pruned at most once a second, not scanned per claim: a burst of N links is not N² work.
      if (t - prunedAt >= 1_000) {
        prunedAt = t;
        for (const [n, expires] of used) if (expires <= t) used.delete(n);
      }
      if ((used.get(nonce) ?? 0) > t) return false;
      used.set(nonce, expiresAt.getTime());
      return true;
    },
  };
}
