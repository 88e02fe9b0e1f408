// Dashboard sessions: a random id in an HttpOnly SameSite cookie; only its hash
// is stored, so a database dump holds no live session.
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { sessions, type DbOrTx } from "@mesh/db";

export const SESSION_COOKIE = "mesh_session";
export const SESSION_TTL_MS = 12 * 3600 * 1000;

/** What a session's row is stored and found under: the sha256 of its id, never the id itself. */
export const sessionIdHash = (sessionId: string): string => createHash("sha256").update(sessionId).digest("hex");

export async function logout(db: DbOrTx, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.idHash, sessionIdHash(sessionId)));
}

export function sessionCookie(sessionId: string, expiresAt: Date, secure: boolean): string {
  return `${SESSION_COOKIE}=${sessionId}; Path=/; HttpOnly; SameSite=Lax; Expires=${expiresAt.toUTCString()}${secure ? "; Secure" : ""}`;
}

export function clearedSessionCookie(secure = false): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? "; Secure" : ""}`;
}

export function readCookie(header: string | null | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}
