// Start-up step after migrations: checks that this instance holds the key the database's secrets are
// sealed with, seals grant secrets an older version stored in clear, and then rewrites the tables once.
import { eq, isNotNull } from "drizzle-orm";
import { grants, type Db } from "@mesh/db";
import { SETTING, settingOnce } from "../services/settings";
import { createSecretBox, isSealed, SecretKeyError, type SecretBox } from "./secret-box";
import type { SecretKeySource } from "./secret-key";
import { vacuumPurgedSecrets } from "./vacuum-purged-secrets";

export async function openSecrets(db: Db, source: SecretKeySource): Promise<{ box: SecretBox; sealed: number; vacuumed: boolean }> {
  const box = createSecretBox(source.key);
  const held = await settingOnce(db, SETTING.secretKeyId, box.keyId);
  if (held !== box.keyId) {
    throw new SecretKeyError(
      `this database's secrets are sealed with key ${held}, but this instance's key (from ${source.from}) is ${box.keyId}: ` +
        "give every instance on one database the same MESH_SECRET_KEY (or the same key file)",
    );
  }
  const sealed = await db.transaction(async (tx) => {
    const rows = await tx
      .select({ id: grants.id, principal: grants.principal, secret: grants.secret })
      .from(grants)
      .where(isNotNull(grants.secret))
      .for("update");
    let n = 0;
    for (const row of rows) {
      if (isSealed(row.secret!)) continue;
      await tx
        .update(grants)
        .set({ secret: box.seal(row.secret!, row.principal) })
        .where(eq(grants.id, row.id));
      n++;
    }
    return n;
  });
  // After sealing (outside its transaction): the clear values migration 0005 replaced and the ones just
  // sealed are still in dead row versions until a vacuum; rewrite both tables once.
  const vacuumed = await vacuumPurgedSecrets(db);
  return { box, sealed, vacuumed };
}
