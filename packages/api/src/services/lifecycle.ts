// node.retire and node.revoke: the two ways a node leaves the mesh. Retire is
// graceful (a final empty declaration, then `retired`); revoke is for a lost node
// (its key refused everywhere at once). Both revoke the node's grants.
import { dropNodePins } from "./role-pins";
import { z } from "zod";
import { eq, sql } from "drizzle-orm";
import { nodes, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { declarationHash } from "../compile/compile-declaration";
import { recordEvent } from "./record-event";
import { appendDeclaration } from "./declaration-store";
import { lockCompilerShared } from "./recompile-node";
import { markNodeGrantsRevoked, settleRevokedGrants } from "../grants/revoke-node-grants";

export const RetireInput = z.strictObject({ id: z.uuid(), keepResources: z.boolean().default(false) });
export type RetireInput = z.input<typeof RetireInput>;

async function lockNode(tx: DbOrTx, id: string) {
  const [node] = await tx.select().from(nodes).where(eq(nodes.id, id)).for("update");
  if (!node) throw new MeshError("NOT_FOUND", `no node with id ${id}`);
  return node;
}

/** Closes the node's link on whichever instance holds it (after commit). */
export async function closeLink(tx: DbOrTx, nodeId: string, reason: "revoked" | "retired" | "replaced"): Promise<void> {
  await notify(tx, CHANNELS.link, `${nodeId} ${reason}`);
}

export async function retireNode(deps: Deps, opts: { actor: string; input: RetireInput }) {
  const input = RetireInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    // Shared compiler lock first, as every declaration writer takes it: a fleet compile pruning the
    // empty body this appends cannot run in between (and the lock order stays compiler, then node row).
    await lockCompilerShared(tx);
    const node = await lockNode(tx, input.id);
    if (node.state !== "enrolled" && node.state !== "disconnected") {
      throw new MeshError("CONFLICT", `node ${node.name} is ${node.state}; only an enrolled or disconnected node can be retired`);
    }
    const final = input.keepResources ? "forget" : "remove";
    const version = node.declaredVersion + 1;
    await appendDeclaration(tx, { nodeId: node.id, version, hash: declarationHash([]), resources: [], roles: [], final });
    await tx
      .update(nodes)
      .set({ state: "retiring", retireMode: final, declaredVersion: version, conflicts: [], updatedAt: sql`now()` })
      .where(eq(nodes.id, node.id));
    await dropNodePins(tx, [node.id]);
    await recordEvent(tx, { actor: opts.actor, action: "node.retire", nodeId: node.id, data: { version, keepResources: input.keepResources } });
    await notify(tx, CHANNELS.declaration, node.id);
    await notify(tx, CHANNELS.node, node.id);
    return { id: node.id, state: "retiring" as const, version };
  });
}

/**
 * Called when a retiring node reports: once it applied the final declaration and
 * owns nothing, it is retired, its key and grants revoked, and its link told so.
 */
export async function completeRetirement(deps: Deps, nodeId: string, report: { declarationVersion: number; owned: unknown[] }) {
  const revoked = await deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, nodeId);
    if (node.state !== "retiring" || report.declarationVersion < node.declaredVersion || report.owned.length > 0) return null;
    await tx.update(nodes).set({ state: "retired", retiredAt: sql`now()`, gatewayId: null, updatedAt: sql`now()` }).where(eq(nodes.id, nodeId));
    await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.retired", nodeId, data: { mode: node.retireMode } });
    await closeLink(tx, nodeId, "retired");
    await notify(tx, CHANNELS.node, nodeId);
    // Committed with the retirement: a failure after this commit cannot leave a grant open.
    return markNodeGrantsRevoked(tx, nodeId);
  });
  if (revoked === null) return false;
  await settleRevokedGrants(deps, nodeId, revoked, `node:${nodeId}`);
  return true;
}

export async function revokeNode(deps: Deps, opts: { actor: string; id: string }) {
  const { node, revoked } = await deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, opts.id);
    if (node.state === "revoked" || node.state === "retired") throw new MeshError("CONFLICT", `node ${node.name} is already ${node.state}`);
    await tx.update(nodes).set({ state: "revoked", revokedAt: sql`now()`, gatewayId: null, updatedAt: sql`now()` }).where(eq(nodes.id, node.id));
    await dropNodePins(tx, [node.id]);
    await recordEvent(tx, { actor: opts.actor, action: "node.revoke", nodeId: node.id });
    await closeLink(tx, node.id, "revoked");
    await notify(tx, CHANNELS.node, node.id);
    // Committed with the revocation; the provider's part follows, retried by the settler if it fails.
    return { node, revoked: await markNodeGrantsRevoked(tx, node.id) };
  });
  const grants = await settleRevokedGrants(deps, node.id, revoked, opts.actor);
  return { id: node.id, state: "revoked" as const, grantsRevoked: grants };
}
