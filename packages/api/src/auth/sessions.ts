// Dashboard sessions: a random id in an HttpOnly SameSite cookie; only its hash
// is stored, so a database dump holds no live session.
import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt } from "drizzle-orm";
import { sessions, type DbOrTx } from "@mesh/db";
import { MeshError } from "../errors";
import { readSetting, SETTING } from "./credentials";
import { verifyPassword } from "./passwords";

export const SESSION_COOKIE = "mesh_session";
export const SESSION_TTL_MS = 12 * 3600 * 1000;

const hashId = (id: string) => createHash("sha256").update(id).digest("hex");

export async function login(db: DbOrTx, password: string): Promise<{ sessionId: string; expiresAt: Date }> {
  const stored = await readSetting(db, SETTING.adminPassword);
  if (!stored || !(await verifyPassword(password, stored))) throw new MeshError("UNAUTHORIZED", "wrong password");
  const sessionId = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await db.insert(sessions).values({ idHash: hashId(sessionId), user: "admin", expiresAt });
  return { sessionId, expiresAt };
}

export async function sessionUser(db: DbOrTx, sessionId: string): Promise<string | null> {
  if (!sessionId || sessionId.length > 128) return null;
  const [row] = await db
    .select({ user: sessions.user })
    .from(sessions)
    .where(and(eq(sessions.idHash, hashId(sessionId)), gt(sessions.expiresAt, new Date())));
  return row?.user ?? null;
}

export async function logout(db: DbOrTx, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.idHash, hashId(sessionId)));
}

export function sessionCookie(sessionId: string, expiresAt: Date, secure: boolean): string {
  return `${SESSION_COOKIE}=${sessionId}; Path=/; HttpOnly; SameSite=Lax; Expires=${expiresAt.toUTCString()}${secure ? "; Secure" : ""}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
}

export function readCookie(header: string | null | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}
