// Checking and consuming enrolment tokens: rows read for many enrolments at once (and cached a few
// seconds), and uses consumed atomically, one token or many tokens in one statement.
import { and, eq, gt, inArray, isNull, lt, sql } from "drizzle-orm";
import { enrolmentTokens, type Db, type DbOrTx, rowsOf } from "@mesh/db";
import { MeshError } from "../errors";
import { secretMatches } from "./enrolment-token";

export type TokenRow = typeof enrolmentTokens.$inferSelect;

/**
 * Token rows read in the last few seconds, per database: hosts enrolling with one token read it
 * once per TOKEN_CACHE_MS, not once each. Only what never changes is trusted from here (the
 * secret's hash, labels, expiry); revocation and remaining uses are checked again, atomically,
 * when a use is consumed, and a stale row can only be too permissive (uses only grow), never refuse.
 */
const TOKEN_CACHE_MS = 5_000;
const TOKEN_CACHE_MAX = 10_000;
const tokenCache = new WeakMap<object, Map<string, { row: TokenRow; at: number }>>();

function cacheOf(db: object) {
  let cache = tokenCache.get(db);
  if (!cache) tokenCache.set(db, (cache = new Map()));
  return cache;
}

export function refusalFor(row: TokenRow, now: Date): MeshError | null {
  if (row.revokedAt) return new MeshError("TOKEN_REVOKED", "the token was revoked");
  if (row.expiresAt <= now) return new MeshError("TOKEN_EXPIRED", `the token expired at ${row.expiresAt.toISOString()}`);
  if (row.uses >= row.maxUses) return new MeshError("TOKEN_USED", "the token has already been used");
  return null;
}

/** The rows of these tokens, from the cache or in one SELECT for those not in it; unknown ids are missing. */
export async function readTokens(db: Db, ids: string[]): Promise<Map<string, TokenRow>> {
  const cache = cacheOf(db);
  const found = new Map<string, TokenRow>();
  const missing: string[] = [];
  for (const id of new Set(ids)) {
    const hit = cache.get(id);
    if (hit && Date.now() - hit.at < TOKEN_CACHE_MS) found.set(id, hit.row);
    else missing.push(id);
  }
  if (missing.length === 0) return found;
  const rows = await db.select().from(enrolmentTokens).where(inArray(enrolmentTokens.id, missing));
  if (cache.size + rows.length > TOKEN_CACHE_MAX) cache.clear();
  for (const row of rows) {
    cache.set(row.id, { row, at: Date.now() });
    found.set(row.id, row);
  }
  return found;
}

/** Why this row does not admit this secret now, or null. */
export function tokenRefusal(row: TokenRow | undefined, secret: string, now: Date): MeshError | null {
  if (!row || !secretMatches(secret, row.secretHash)) return new MeshError("TOKEN_UNKNOWN", "the token is not known to this control plane");
  return refusalFor(row, now);
}

/**
 * Consumes one use, atomically: of many concurrent enrolments only maxUses get a row back.
 * Called last in the transaction, because the row stays locked until commit. When it is
 * refused, the row is read again for the reason (revoked, expired, used up).
 */
export async function consumeToken(db: Db, tx: DbOrTx, tokenId: string, now: Date): Promise<void> {
  const consumed = await tx
    .update(enrolmentTokens)
    .set({ uses: sql`${enrolmentTokens.uses} + 1`, lastUsedAt: now })
    .where(
      and(
        eq(enrolmentTokens.id, tokenId),
        isNull(enrolmentTokens.revokedAt),
        gt(enrolmentTokens.expiresAt, now),
        lt(enrolmentTokens.uses, enrolmentTokens.maxUses),
      ),
    )
    .returning({ id: enrolmentTokens.id });
  if (consumed.length > 0) return;
  cacheOf(db).delete(tokenId);
  const [row] = await tx.select().from(enrolmentTokens).where(eq(enrolmentTokens.id, tokenId));
  throw (row && refusalFor(row, now)) || new MeshError("TOKEN_USED", "the token has already been used");
}

/**
 * Consumes `uses` uses of each token in one UPDATE, all or nothing per token: a token without that
 * many uses left (or revoked, or expired) is not touched, and its id is returned so the caller can
 * roll back and enrol its hosts one by one, which gives each the exact answer. The row locks are taken
 * in id order when there are several (a SELECT … ORDER BY … FOR UPDATE first), so two batches naming
 * the same tokens never wait on each other in a cycle.
 */
export async function consumeTokenUses(db: Db, tx: DbOrTx, uses: Map<string, number>, now: Date): Promise<string[]> {
  const ids = [...uses.keys()].sort();
  if (ids.length === 0) return [];
  if (ids.length > 1)
    await tx.select({ id: enrolmentTokens.id }).from(enrolmentTokens).where(inArray(enrolmentTokens.id, ids)).orderBy(enrolmentTokens.id).for("update");
  const json = JSON.stringify(ids.map((id) => ({ id, n: uses.get(id)! })));
  const at = now.toISOString();
  // The id list as well as the join: the planner then reads the tokens by key, not the whole table.
  const rows = await tx.execute(sql`
    update ${enrolmentTokens} set uses = ${enrolmentTokens.uses} + v.n, last_used_at = ${at}::timestamptz
    from jsonb_to_recordset(${json}::jsonb) as v(id text, n int)
    where ${enrolmentTokens.id} = v.id and ${inArray(enrolmentTokens.id, ids)} and ${enrolmentTokens.revokedAt} is null
      and ${enrolmentTokens.expiresAt} > ${at}::timestamptz and ${enrolmentTokens.uses} + v.n <= ${enrolmentTokens.maxUses}
    returning ${enrolmentTokens.id}`);
  const consumed = new Set(rowsOf<{ id: string }>(rows).map((r) => r.id));
  const short = ids.filter((id) => !consumed.has(id));
  for (const id of short) cacheOf(db).delete(id);
  return short;
}
