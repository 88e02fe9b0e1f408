// The first admin user, named `admin`, carries the password MESH_ADMIN_PASSWORD
// sets (or the one generated at first start): the same hash as the setting.
import { sql } from "drizzle-orm";
import { users, type Db } from "@mesh/db";
import { readSetting, SETTING } from "./credentials";

export async function ensureAdminUser(db: Db, opts: { passwordFromEnv: boolean }): Promise<void> {
  const hash = await readSetting(db, SETTING.adminPassword);
  if (!hash) return;
  const insert = db.insert(users).values({ name: "admin", role: "admin", passwordHash: hash, createdBy: "system" });
  // The environment is authoritative for `admin`, as it always was for the one password.
  if (opts.passwordFromEnv) await insert.onConflictDoUpdate({ target: users.name, set: { passwordHash: hash, role: "admin", revokedAt: sql`null` } });
  else await insert.onConflictDoNothing();
}
