// Makes the grants a node's roles declare exist (issuing each once, keeping its
// secret after), marks the ones no longer declared for revocation, and turns each
// into the file resource that stands for the credential in the stored declaration.
// Nothing here talks to a provider: settle-grants does that after commit (decision 0011).
import { and, eq, isNull, sql } from "drizzle-orm";
import { grants, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import { canonicalJson, type GrantDeclaration, type Resource } from "@mesh/protocol";
import { MeshError } from "../errors";
import { recordEvent } from "../services/record-event";
import { grantReference } from "./grant-reference";
import { principalFor, type Grants } from "./provider";

export async function ensureNodeGrants(tx: DbOrTx, setup: Grants | undefined, nodeId: string, declared: GrantDeclaration[], actor: string): Promise<Resource[]> {
  const held = await tx.select().from(grants).where(and(eq(grants.nodeId, nodeId), isNull(grants.revokedAt)));
  // jsonb reorders keys: compare specs canonically, or every recompile would re-issue every grant.
  const same = (spec: unknown, grant: GrantDeclaration) => canonicalJson(spec) === canonicalJson(grant);
  const files: Resource[] = [];
  for (const grant of declared) {
    const provider = setup?.providers[grant.provider];
    if (!setup || !provider) throw new MeshError("BAD_INPUT", `grant "${grant.id}" needs the ${grant.provider} grant provider, which is not configured (MESH_GRANT_POSTGRES_URL)`);
    const row = held.find((h) => h.grantId === grant.id && same(h.spec, grant));
    let credential: string;
    if (row) {
      credential = setup.secrets.open(row.secret!, row.principal);
    } else {
      const principal = principalFor(nodeId, grant.id);
      credential = provider.mint(principal, grant);
      await tx.delete(grants).where(and(eq(grants.provider, grant.provider), eq(grants.principal, principal)));
      const [inserted] = await tx
        .insert(grants)
        .values({ nodeId, grantId: grant.id, provider: grant.provider, principal, spec: grant, secret: setup.secrets.seal(credential, principal), settledAt: null })
        .returning({ id: grants.id });
      await notify(tx, CHANNELS.grant, inserted!.id);
      await recordEvent(tx, { actor, action: "grant.issue", nodeId, target: `${grant.provider}:${principal}` });
    }
    files.push({ type: "file", id: grant.id, path: grant.path, mode: grant.mode, content: grantReference(grant.id, credential), encoding: "utf8", onDrift: "correct" });
  }
  for (const h of held) {
    if (declared.some((g) => g.id === h.grantId)) continue; // kept, or re-issued above under the same principal
    await tx.update(grants).set({ revokedAt: sql`now()`, secret: null, settledAt: null }).where(eq(grants.id, h.id));
    await notify(tx, CHANNELS.grant, h.id);
    await recordEvent(tx, { actor, action: "grant.revoke", nodeId, target: `${h.provider}:${h.principal}`, data: { reason: "no longer declared" } });
  }
  return files;
}
