// The first admin user, named `admin`, carries the password MESH_ADMIN_PASSWORD
// sets (or the one generated at first start). A changed setting ends admin's sessions.
import { eq, sql } from "drizzle-orm";
import { sessions, users, type Db } from "@mesh/db";
import { recordEvent } from "../services/record-event";
import { ACTOR, userActor } from "./actor";
import { readSetting, SETTING } from "../services/settings";

/**
 * `changedFromEnv`: MESH_ADMIN_PASSWORD differs from the one applied at the last start.
 * Then it replaces admin's password (whatever it was changed to since), restores the
 * user if revoked, and ends every session of it: the operator's way back in.
 */
export async function ensureAdminUser(db: Db, opts: { changedFromEnv: boolean }): Promise<void> {
  const hash = await readSetting(db, SETTING.adminPassword);
  if (!hash) return;
  await db.transaction(async (tx) => {
    const created = await tx
      .insert(users)
      .values({ name: "admin", role: "admin", passwordHash: hash, createdBy: ACTOR.system })
      .onConflictDoNothing()
      .returning({ id: users.id });
    if (created.length > 0 || !opts.changedFromEnv) return;
    await tx.update(users).set({ passwordHash: hash, role: "admin", revokedAt: sql`null` }).where(eq(users.name, "admin"));
    await tx.delete(sessions).where(eq(sessions.user, "admin"));
    await recordEvent(tx, {
      actor: ACTOR.system,
      action: "user.set-password",
      target: userActor("admin"),
      data: { from: "MESH_ADMIN_PASSWORD", sessionsEnded: true },
    });
  });
}
