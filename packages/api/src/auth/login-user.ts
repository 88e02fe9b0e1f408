// Dashboard login by user name and password: a new session id every time (the
// one presented before, if any, is dropped). Failures back off per (account, address).
import { randomBytes } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import { sessions, users, type DbOrTx } from "@mesh/db";
import { MeshError } from "../errors";
import { describeWait, FailureBackoff } from "../http/failure-backoff";
import { addressKey } from "../http/address-key";
import { EventBudget } from "../http/event-budget";
import { verifyPassword, hashPassword } from "./passwords";
import { SESSION_TTL_MS, sessionIdHash } from "./sessions";

/**
 * Only failures count, and they are counted per (account, address): someone failing
 * from one address slows down only themselves, never the account's owner elsewhere.
 * Addresses are keyed like every per-address limit (an IPv6 /64 is one address).
 *
 * A coarse per-address count catches one address trying many accounts (spraying), but it
 * is consulted only for an (account, address) pair that has failed before: behind a
 * proxy everyone may share one address, and a user who has not failed is then not locked
 * out by someone else's failures. A sprayer gets one guess per account before the
 * per-address cap holds it; a much larger cap over every attempt bounds guessing unknown
 * names (each costs an scrypt) from one address.
 */
export interface LoginLimits {
  perAccountAddress: FailureBackoff;
  perAddress: FailureBackoff;
  perAddressAny: FailureBackoff;
  /** "login refused" log lines per address key: a locked-out guesser hammering must not flood the log. */
  refusedLog: EventBudget;
}

export interface LoginLimitOptions {
  /** Failures per (account, address) before the backoff starts (1 s, doubling, at most 15 min). */
  perAccountAddress?: number;
  /** Failures per address, over every account, before the same backoff for pairs that failed before. */
  perAddress?: number;
  /** Failures per address before the backoff holds every attempt from it, pairs that never failed too. */
  perAddressAny?: number;
  now?: () => number;
}

export function createLoginLimits(options: LoginLimitOptions = {}): LoginLimits {
  const { perAccountAddress = 5, perAddress = 50, perAddressAny = 500, now } = options;
  return {
    perAccountAddress: new FailureBackoff({ freeFailures: perAccountAddress, now }),
    perAddress: new FailureBackoff({ freeFailures: perAddress, now }),
    perAddressAny: new FailureBackoff({ freeFailures: perAddressAny, now }),
    refusedLog: new EventBudget(20, 10 * 60_000, now),
  };
}

// Verified against when the user does not exist, so both cases take as long.
let decoy: Promise<string> | null = null;

export async function loginUser(
  db: DbOrTx,
  limits: LoginLimits,
  input: { name: string; password: string; address?: string; previousSessionId?: string | null },
): Promise<{ sessionId: string; expiresAt: Date; role: string }> {
  const name = input.name.trim().slice(0, 64) || "admin";
  const address = addressKey(input.address);
  const accountKey = `${name}\u0000${address}`;
  const pairFailed = limits.perAccountAddress.failures(accountKey) > 0;
  const counted: [FailureBackoff, string][] = [];
  for (const [limiter, key, gate] of [
    [limits.perAddressAny, address, true],
    [limits.perAddress, address, pairFailed],
    [limits.perAccountAddress, accountKey, true],
  ] as const) {
    const attempt = limiter.attempt(key, { gate });
    if (!attempt.allowed) {
      // A refusal by the limits is not itself a failure to count.
      for (const [l, k] of counted) l.forgive(k);
      throw new MeshError("RATE_LIMITED", `too many failed logins; try again in ${describeWait(attempt.retryAfterMs)}`);
    }
    counted.push([limiter, key]);
  }
  const [user] = await db
    .select()
    .from(users)
    .where(and(eq(users.name, name), isNull(users.revokedAt)));
  decoy ??= hashPassword(randomBytes(16).toString("hex"));
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await decoy));
  const session = user && ok ? await startSession(db, user, input.previousSessionId) : null;
  if (!session) throw new MeshError("UNAUTHORIZED", "wrong user name or password");
  limits.perAccountAddress.succeeded(accountKey);
  limits.perAddress.forgive(address);
  limits.perAddressAny.forgive(address);
  return { ...session, role: user!.role };
}

/**
 * Inserts the session only while the user still has the password just verified and
 * is not revoked, holding the user's row against a concurrent password change or
 * revocation until it commits: a change either sees this session (and ends it) or
 * makes this insert find nothing. Null when the user changed in between.
 */
async function startSession(db: DbOrTx, user: { name: string; passwordHash: string }, previousSessionId?: string | null) {
  return db.transaction(async (tx) => {
    const [still] = await tx
      .select({ name: users.name })
      .from(users)
      .where(and(eq(users.name, user.name), eq(users.passwordHash, user.passwordHash), isNull(users.revokedAt)))
      .for("share");
    if (!still) return null;
    if (previousSessionId) await tx.delete(sessions).where(eq(sessions.idHash, sessionIdHash(previousSessionId)));
    const sessionId = randomBytes(32).toString("base64url");
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    await tx.insert(sessions).values({ idHash: sessionIdHash(sessionId), user: user.name, expiresAt });
    return { sessionId, expiresAt };
  });
}
