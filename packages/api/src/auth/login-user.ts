// Dashboard login by user name and password: a new session id every time (the
// one presented before, if any, is dropped), rate-limited per account and address.
import { createHash, randomBytes } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import { sessions, users, type DbOrTx } from "@mesh/db";
import { MeshError } from "../errors";
import { RateLimiter } from "../http/rate-limiter";
import { verifyPassword, hashPassword } from "./passwords";
import { SESSION_TTL_MS } from "./sessions";

export interface LoginLimits {
  perAccount: RateLimiter;
  perAddress: RateLimiter;
}

/** Attempts per 5 minutes: enough for a typo or three, far too few for guessing. */
export function createLoginLimits(perAccount = 10, perAddress = 50): LoginLimits {
  return { perAccount: new RateLimiter(perAccount, 5 * 60_000), perAddress: new RateLimiter(perAddress, 5 * 60_000) };
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
// Verified against when the user does not exist, so both cases take as long.
let decoy: Promise<string> | null = null;

export async function loginUser(
  db: DbOrTx,
  limits: LoginLimits,
  input: { name: string; password: string; address?: string; previousSessionId?: string | null },
): Promise<{ sessionId: string; expiresAt: Date; role: string }> {
  const name = input.name.trim().slice(0, 64) || "admin";
  if (!limits.perAddress.take(`addr:${input.address ?? "?"}`) || !limits.perAccount.take(`user:${name}`)) {
    throw new MeshError("RATE_LIMITED", "too many login attempts; wait a few minutes");
  }
  const [user] = await db.select().from(users).where(and(eq(users.name, name), isNull(users.revokedAt)));
  decoy ??= hashPassword(randomBytes(16).toString("hex"));
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await decoy));
  if (!user || !ok) throw new MeshError("UNAUTHORIZED", "wrong user name or password");
  if (input.previousSessionId) await db.delete(sessions).where(eq(sessions.idHash, sha256(input.previousSessionId)));
  const sessionId = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await db.insert(sessions).values({ idHash: sha256(sessionId), user: user.name, expiresAt });
  return { sessionId, expiresAt, role: user.role };
}
