// Start-up step, once per database: rewrites the tables whose old row versions held grant secrets in
// clear (declarations purged by migration 0005, grants sealed by openSecrets), so no dead tuple keeps them.
import { count, sql } from "drizzle-orm";
import { declarations, grants, type Db } from "@mesh/db";
import { readSetting, settingOnce } from "../services/settings";

export const VACUUMED_SETTING = "secrets_vacuumed_at";

/**
 * VACUUM FULL of declarations and grants, the first time an instance of this version starts on a
 * database that already has rows in either (a fresh database has no old row versions; it only records
 * the setting). VACUUM cannot run in a transaction; two instances starting together both rewrite, harmlessly.
 * Returns whether it rewrote. WAL, backups and replicas made before keep what they kept (decision 0011).
 */
export async function vacuumPurgedSecrets(db: Db): Promise<boolean> {
  if (await readSetting(db, VACUUMED_SETTING)) return false;
  const [[d], [g]] = await Promise.all([db.select({ n: count() }).from(declarations), db.select({ n: count() }).from(grants)]);
  const hadRows = (d?.n ?? 0) + (g?.n ?? 0) > 0;
  if (hadRows) {
    await db.execute(sql`vacuum full declarations`);
    await db.execute(sql`vacuum full grants`);
  }
  await settingOnce(db, VACUUMED_SETTING, new Date().toISOString());
  return hadRows;
}
