// The admin's credentials: a password for the dashboard and an API key for
// automation. Set from the environment, or generated at first start and printed once.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { settings, type Db, type DbOrTx } from "@mesh/db";
import { hashPassword } from "./passwords";
import { ensureAdminUser } from "./admin-user";

export const SETTING = {
  adminPassword: "admin_password_hash",
  apiKey: "admin_api_key_hash",
  linkSecret: "link_challenge_secret",
  secretKeyId: "secret_key_id",
} as const;

export async function readSetting(db: DbOrTx, key: string): Promise<string | null> {
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, key));
  return row?.value ?? null;
}

async function writeSetting(db: DbOrTx, key: string, value: string): Promise<void> {
  await db.insert(settings).values({ key, value }).onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: sql`now()` } });
}

/** Inserts the value unless one is there already; returns the one that won. */
export async function settingOnce(db: DbOrTx, key: string, value: string): Promise<string> {
  await db.insert(settings).values({ key, value }).onConflictDoNothing();
  return (await readSetting(db, key))!;
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function apiKeyMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(hashApiKey(presented), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface GeneratedCredentials {
  /** Present only when generated now: print once, never stored in clear. */
  password?: string;
  apiKey?: string;
}

export async function ensureAdminCredentials(db: Db, env: { password?: string; apiKey?: string }): Promise<GeneratedCredentials> {
  const generated: GeneratedCredentials = {};
  if (env.password) {
    await writeSetting(db, SETTING.adminPassword, await hashPassword(env.password));
  } else if (!(await readSetting(db, SETTING.adminPassword))) {
    const password = randomBytes(12).toString("base64url");
    const ours = await hashPassword(password);
    // Another instance starting at the same moment may win; then its password stands.
    if ((await settingOnce(db, SETTING.adminPassword, ours)) === ours) generated.password = password;
  }
  if (env.apiKey) {
    await writeSetting(db, SETTING.apiKey, hashApiKey(env.apiKey));
  } else if (!(await readSetting(db, SETTING.apiKey))) {
    const apiKey = `mesh_${randomBytes(24).toString("base64url")}`;
    if ((await settingOnce(db, SETTING.apiKey, hashApiKey(apiKey))) === hashApiKey(apiKey)) generated.apiKey = apiKey;
  }
  await ensureAdminUser(db, { passwordFromEnv: !!env.password });
  return generated;
}
