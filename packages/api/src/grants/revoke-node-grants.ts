// Revokes every grant a node holds, at its provider first, then in the database.
import { and, eq, isNull, sql } from "drizzle-orm";
import { grants } from "@mesh/db";
import type { Deps } from "../deps";
import { recordEvent } from "../services/record-event";
import type { GrantProviders } from "./provider";

export async function revokeNodeGrants(deps: Deps, nodeId: string, actor: string): Promise<number> {
  const providers: GrantProviders = deps.grants ?? {};
  const open = await deps.db.select().from(grants).where(and(eq(grants.nodeId, nodeId), isNull(grants.revokedAt)));
  let revoked = 0;
  for (const grant of open) {
    const provider = providers[grant.provider as keyof GrantProviders];
    try {
      if (!provider) throw new Error(`no ${grant.provider} grant provider is configured`);
      await provider.revoke(grant.principal);
      await deps.db.update(grants).set({ revokedAt: sql`now()`, secret: null }).where(eq(grants.id, grant.id));
      await recordEvent(deps.db, { actor, action: "grant.revoke", nodeId, target: `${grant.provider}:${grant.principal}` });
      revoked++;
    } catch (err) {
      deps.log.error({ err, nodeId, principal: grant.principal }, "grant revoke failed");
      await recordEvent(deps.db, { actor, action: "grant.revoke", nodeId, target: `${grant.provider}:${grant.principal}`, result: "failed", data: { message: (err as Error).message } });
    }
  }
  return revoked;
}
