// The settings table: named values the control plane keeps for itself (the admin's credential
// hashes, the link challenge secret, the secret key's id), read and written by key.
import { eq, sql } from "drizzle-orm";
import { settings, type DbOrTx } from "@mesh/db";

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

export async function writeSetting(db: DbOrTx, key: string, value: string): Promise<void> {
  await db
    .insert(settings)
    .values({ key, value })
    .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: sql`now()` } });
}

/** Inserts the value unless one is there already; returns the one that won. */
export async function settingOnce(db: DbOrTx, key: string, value: string): Promise<string> {
  await db.insert(settings).values({ key, value }).onConflictDoNothing();
  return (await readSetting(db, key))!;
}
