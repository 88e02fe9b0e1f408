// Resolves a request to a Caller: the env admin API key, a named API key, or a
// dashboard session of a user who is not revoked. Anything else is nobody.
import { and, eq, gt, isNull } from "drizzle-orm";
import { apiKeys, sessions, users, type DbOrTx } from "@mesh/db";
import { ACTOR, keyActor, userActor } from "./actor";
import type { Caller } from "./caller";
import { apiKeyMatches } from "./credentials";
import { readSetting, SETTING } from "../services/settings";
import { apiKeyId } from "./api-key-format";
import { readCookie, SESSION_COOKIE, sessionIdHash } from "./sessions";

async function namedKeyCaller(db: DbOrTx, presented: string, id: string): Promise<Caller | null> {
  const [row] = await db
    .select({ name: apiKeys.name, role: apiKeys.role, keyHash: apiKeys.keyHash })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
  if (!row || !apiKeyMatches(presented, row.keyHash)) return null;
  return { name: keyActor(row.name), role: row.role };
}

export async function sessionCaller(db: DbOrTx, sessionId: string): Promise<Caller | null> {
  if (!sessionId || sessionId.length > 128) return null;
  const idHash = sessionIdHash(sessionId);
  const [row] = await db
    .select({ name: users.name, role: users.role })
    .from(sessions)
    .innerJoin(users, and(eq(users.name, sessions.user), isNull(users.revokedAt)))
    .where(and(eq(sessions.idHash, idHash), gt(sessions.expiresAt, new Date())));
  return row ? { name: userActor(row.name), role: row.role, user: { name: row.name, sessionIdHash: idHash } } : null;
}

export async function authenticateCaller(db: DbOrTx, headers: Headers): Promise<Caller | null> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const m = /^Bearer\s+(\S{1,256})$/i.exec(authorization);
    if (!m) return null;
    const id = apiKeyId(m[1]!);
    if (id) return namedKeyCaller(db, m[1]!, id);
    const stored = await readSetting(db, SETTING.apiKey);
    return stored && apiKeyMatches(m[1]!, stored) ? { name: ACTOR.adminKey, role: "admin" } : null;
  }
  const session = readCookie(headers.get("cookie"), SESSION_COOKIE);
  return session ? sessionCaller(db, session) : null;
}
