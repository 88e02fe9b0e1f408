// Revokes every grant a node holds, in two steps: marked revoked in the same transaction that
// retires or revokes the node (so the revocation is committed with the decision, and nothing can
// leave it undone), then done at the provider after commit; a failure there is retried by the settler.
import { and, eq, isNull, sql } from "drizzle-orm";
import { grants, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import type { Deps } from "../deps";
import { recordEvent } from "../services/record-event";
import { settleGrant } from "./settle-grants";

export interface RevokedGrant {
  id: string;
  provider: string;
  principal: string;
}

/** Inside the transaction that retires or revokes the node: its open grants are revoked when it commits. */
export async function markNodeGrantsRevoked(tx: DbOrTx, nodeId: string): Promise<RevokedGrant[]> {
  const rows = await tx
    .update(grants)
    .set({ revokedAt: sql`now()`, secret: null, settledAt: null })
    .where(and(eq(grants.nodeId, nodeId), isNull(grants.revokedAt)))
    .returning({ id: grants.id, provider: grants.provider, principal: grants.principal });
  for (const row of rows) await notify(tx, CHANNELS.grant, row.id);
  return rows;
}

/** After commit: done at the provider at once; what fails stays pending for the settler (its sweep retries). */
export async function settleRevokedGrants(deps: Deps, nodeId: string, revoked: RevokedGrant[], actor: string): Promise<number> {
  let settled = 0;
  for (const grant of revoked) {
    const target = `${grant.provider}:${grant.principal}`;
    try {
      await settleGrant(deps, grant.id);
      await recordEvent(deps.db, { actor, action: "grant.revoke", nodeId, target });
      settled++;
    } catch (err) {
      deps.log.error({ nodeId, principal: grant.principal, reason: (err as Error).message }, "grant revoke failed; will retry");
      await recordEvent(deps.db, {
        actor,
        action: "grant.revoke",
        nodeId,
        target,
        result: "failed",
        data: { message: (err as Error).message, retried: true },
      }).catch(() => {});
    }
  }
  return settled;
}
