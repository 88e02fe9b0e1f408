// The admin's credentials: a password for the dashboard and an API key for
// automation. Set from the environment, or generated at first start and printed once.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "@mesh/db";
import { hashPassword, verifyPassword } from "./passwords";
import { ensureAdminUser } from "./admin-user";
import { recordEvent } from "../services/record-event";
import { ACTOR } from "./actor";
import { readSetting, SETTING, settingOnce, writeSetting } from "../services/settings";

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

/**
 * At start. A setting in the environment is applied when it differs from the one
 * applied last: a new MESH_ADMIN_PASSWORD replaces admin's password and ends its
 * sessions; a new MESH_ADMIN_API_KEY replaces the old key, which stops working.
 * An unchanged setting changes nothing, so a password admin changed in the
 * dashboard stands until the environment changes.
 */
export async function ensureAdminCredentials(db: Db, env: { password?: string; apiKey?: string }): Promise<GeneratedCredentials> {
  const generated: GeneratedCredentials = {};
  let passwordChanged = false;
  if (env.password) {
    const applied = await readSetting(db, SETTING.adminPassword);
    if (!applied || !(await verifyPassword(env.password, applied))) {
      await writeSetting(db, SETTING.adminPassword, await hashPassword(env.password));
      passwordChanged = !!applied;
    }
  } else if (!(await readSetting(db, SETTING.adminPassword))) {
    const password = randomBytes(12).toString("base64url");
    const ours = await hashPassword(password);
    // Another instance starting at the same moment may win; then its password stands.
    if ((await settingOnce(db, SETTING.adminPassword, ours)) === ours) generated.password = password;
  }
  if (env.apiKey) {
    const applied = await readSetting(db, SETTING.apiKey);
    if (applied !== hashApiKey(env.apiKey)) {
      await db.transaction(async (tx) => {
        await writeSetting(tx, SETTING.apiKey, hashApiKey(env.apiKey!));
        if (applied) await recordEvent(tx, { actor: ACTOR.system, action: "api-key.rotate", target: ACTOR.adminKey, data: { from: "MESH_ADMIN_API_KEY" } });
      });
    }
  } else if (!(await readSetting(db, SETTING.apiKey))) {
    const apiKey = `mesh_${randomBytes(24).toString("base64url")}`;
    if ((await settingOnce(db, SETTING.apiKey, hashApiKey(apiKey))) === hashApiKey(apiKey)) generated.apiKey = apiKey;
  }
  await ensureAdminUser(db, { changedFromEnv: passwordChanged });
  return generated;
}
