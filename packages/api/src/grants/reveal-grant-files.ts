// Puts each grant's credential back into the file resource that stands for it, as
// the declaration goes to its host: the only place a grant secret leaves the grants table.
import { and, eq, isNull } from "drizzle-orm";
import { grants, type DbOrTx } from "@mesh/db";
import type { Resource } from "@mesh/protocol";
import type { SecretBox } from "../secrets/secret-box";
import { credentialDigest, parseGrantReference } from "./grant-reference";

export type Revealed = { ok: true; resources: Resource[] } | { ok: false; reason: string };

export async function revealGrantFiles(db: DbOrTx, secrets: SecretBox | undefined, nodeId: string, resources: Resource[]): Promise<Revealed> {
  if (!resources.some((r) => r.type === "file" && parseGrantReference(r.content))) return { ok: true, resources };
  const held = await db
    .select()
    .from(grants)
    .where(and(eq(grants.nodeId, nodeId), isNull(grants.revokedAt)));
  const out: Resource[] = [];
  for (const r of resources) {
    const ref = r.type === "file" ? parseGrantReference(r.content) : null;
    const row = ref && ref.grantId === r.id ? held.find((h) => h.grantId === ref.grantId) : undefined;
    if (!ref || !row) {
      out.push(r);
      continue;
    }
    if (!secrets) return { ok: false, reason: "no secret key on this instance" };
    // Held back until the provider has the credential, so the host never gets one that does not work yet.
    if (!row.settledAt) return { ok: false, reason: `grant ${row.grantId} is not issued at its provider yet` };
    const credential = secrets.open(row.secret!, row.principal);
    if (credentialDigest(credential) !== ref.digest) return { ok: false, reason: `grant ${row.grantId} changed since this declaration was compiled` };
    out.push({ ...r, content: credential } as Resource);
  }
  return { ok: true, resources: out };
}
