// Makes the grants a node's roles declare exist at their providers (issuing each
// once, reusing its secret after), revokes the ones no longer declared, and
// turns each into the file resource that carries the credential to the host.
import { and, eq, isNull, sql } from "drizzle-orm";
import { grants, type DbOrTx } from "@mesh/db";
import type { GrantDeclaration, Resource } from "@mesh/protocol";
import { MeshError } from "../errors";
import { recordEvent } from "../services/record-event";
import { principalFor, type GrantProviders } from "./provider";

export async function ensureNodeGrants(tx: DbOrTx, providers: GrantProviders, nodeId: string, declared: GrantDeclaration[], actor: string): Promise<Resource[]> {
  const held = await tx.select().from(grants).where(and(eq(grants.nodeId, nodeId), isNull(grants.revokedAt)));
  const files: Resource[] = [];
  for (const grant of declared) {
    const provider = providers[grant.provider];
    if (!provider) throw new MeshError("BAD_INPUT", `grant "${grant.id}" needs the ${grant.provider} grant provider, which is not configured (MESH_GRANT_POSTGRES_URL)`);
    let row = held.find((h) => h.grantId === grant.id && JSON.stringify(h.spec) === JSON.stringify(grant));
    if (!row) {
      const principal = principalFor(nodeId, grant.id);
      const secret = await provider.issue(principal, grant);
      await tx.delete(grants).where(and(eq(grants.provider, grant.provider), eq(grants.principal, principal)));
      [row] = await tx.insert(grants).values({ nodeId, grantId: grant.id, provider: grant.provider, principal, spec: grant, secret }).returning();
      await recordEvent(tx, { actor, action: "grant.issue", nodeId, target: `${grant.provider}:${principal}` });
    }
    files.push({ type: "file", id: grant.id, path: grant.path, mode: grant.mode, content: row!.secret ?? "", encoding: "utf8", onDrift: "correct" });
  }
  for (const h of held) {
    if (declared.some((g) => g.id === h.grantId && JSON.stringify(h.spec) === JSON.stringify(g))) continue;
    if (declared.some((g) => g.id === h.grantId)) continue; // re-issued above under the same principal
    const provider = providers[h.provider as GrantDeclaration["provider"]];
    if (provider) await provider.revoke(h.principal);
    await tx.update(grants).set({ revokedAt: sql`now()`, secret: null }).where(eq(grants.id, h.id));
    await recordEvent(tx, { actor, action: "grant.revoke", nodeId, target: `${h.provider}:${h.principal}`, data: { reason: "no longer declared" } });
  }
  return files;
}
