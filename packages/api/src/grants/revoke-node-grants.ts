// Revokes every grant a node holds: committed first (so no later compile or settle
// brings it back), then done at the provider at once; a failure is retried by the settler.
import { and, eq, isNull, sql } from "drizzle-orm";
import { grants, notify, CHANNELS } from "@mesh/db";
import type { Deps } from "../deps";
import { recordEvent } from "../services/record-event";
import { settleGrant } from "./settle-grants";

export async function revokeNodeGrants(deps: Deps, nodeId: string, actor: string): Promise<number> {
  const open = await deps.db.transaction(async (tx) => {
    const rows = await tx
      .update(grants)
      .set({ revokedAt: sql`now()`, secret: null, settledAt: null })
      .where(and(eq(grants.nodeId, nodeId), isNull(grants.revokedAt)))
      .returning({ id: grants.id, provider: grants.provider, principal: grants.principal });
    for (const row of rows) await notify(tx, CHANNELS.grant, row.id);
    return rows;
  });
  let revoked = 0;
  for (const grant of open) {
    const target = `${grant.provider}:${grant.principal}`;
    try {
      await settleGrant(deps, grant.id);
      await recordEvent(deps.db, { actor, action: "grant.revoke", nodeId, target });
      revoked++;
    } catch (err) {
      deps.log.error({ nodeId, principal: grant.principal, reason: (err as Error).message }, "grant revoke failed; will retry");
      await recordEvent(deps.db, { actor, action: "grant.revoke", nodeId, target, result: "failed", data: { message: (err as Error).message, retried: true } });
    }
  }
  return revoked;
}
