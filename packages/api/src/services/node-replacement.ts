// node.approveReplacement / node.rejectReplacement: an admin's answer to a machine
// that enrolled claiming to be a live node without proof of its key (decision 0005).
import { z } from "zod";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { nodes, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { recordEvent } from "./record-event";
import { closeLink } from "./lifecycle";
import { loadRoles, lockCompilerShared, recompileNode } from "./recompile-node";

export const ReplacementInput = z.strictObject({ id: z.uuid() });
export type ReplacementInput = z.infer<typeof ReplacementInput>;

async function lockPending(tx: DbOrTx, id: string) {
  const [pending] = await tx.select().from(nodes).where(eq(nodes.id, id)).for("update");
  if (!pending) throw new MeshError("NOT_FOUND", `no node with id ${id}`);
  if (pending.state !== "pending" || !pending.replacesNodeId)
    throw new MeshError("CONFLICT", `node ${pending.name} (${id}) is ${pending.state}, not a replacement awaiting approval`);
  return { ...pending, replacesNodeId: pending.replacesNodeId };
}

/**
 * The existing node takes the pending node's key (and the facts it enrolled with);
 * its old key is refused from now on and its open link is closed. The pending node ends.
 */
export async function approveReplacement(deps: Deps, opts: { actor: string; input: ReplacementInput }) {
  const { id } = ReplacementInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    // The compiler lock before any node row: a role change takes them in this order (no deadlock).
    await lockCompilerShared(tx);
    const pending = await lockPending(tx, id);
    const [target] = await tx.select().from(nodes).where(eq(nodes.id, pending.replacesNodeId)).for("update");
    if (!target || (target.state !== "enrolled" && target.state !== "disconnected")) {
      throw new MeshError(
        "CONFLICT",
        `the node this machine claims to be is ${target?.state ?? "gone"}; reject the claim and enrol the machine with a new token`,
      );
    }
    // The pending row leaves the live machine-id first, so the target may take its key.
    await tx.update(nodes).set({ state: "retired", retiredAt: sql`now()`, updatedAt: sql`now()` }).where(eq(nodes.id, pending.id));
    await tx
      .update(nodes)
      .set({
        publicKey: pending.publicKey,
        profile: pending.profile,
        inventory: pending.inventory,
        inventoryHash: pending.inventoryHash,
        hostVersion: pending.hostVersion,
        tokenId: pending.tokenId,
        enrolledFrom: pending.enrolledFrom,
        state: "disconnected",
        gatewayId: null,
        updatedAt: sql`now()`,
      })
      .where(eq(nodes.id, target.id));
    const data = { pendingNodeId: pending.id, address: pending.enrolledFrom, claimedAt: pending.createdAt.toISOString() };
    await recordEvent(tx, { actor: opts.actor, action: "node.replacement-approved", nodeId: target.id, target: pending.id, data });
    await recordEvent(tx, { actor: opts.actor, action: "node.replacement-approved", nodeId: pending.id, target: target.id, data: { replaced: target.id } });
    await closeLink(tx, target.id, "replaced");
    await recompileNode(tx, target.id, { roles: await loadRoles(tx), actor: opts.actor, grants: deps.grants });
    await notify(tx, CHANNELS.node, target.id);
    await notify(tx, CHANNELS.node, pending.id);
    return { id: target.id, replacedBy: pending.id };
  });
}

/** The claim is refused for good: the pending node is revoked, the live node untouched. */
export async function rejectReplacement(deps: Deps, opts: { actor: string; input: ReplacementInput }) {
  const { id } = ReplacementInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    const pending = await lockPending(tx, id);
    await tx.update(nodes).set({ state: "revoked", revokedAt: sql`now()`, updatedAt: sql`now()` }).where(eq(nodes.id, pending.id));
    const data = { pendingNodeId: pending.id, address: pending.enrolledFrom, claimedAt: pending.createdAt.toISOString() };
    await recordEvent(tx, { actor: opts.actor, action: "node.replacement-rejected", nodeId: pending.replacesNodeId, target: pending.id, data });
    await recordEvent(tx, {
      actor: opts.actor,
      action: "node.replacement-rejected",
      nodeId: pending.id,
      target: pending.replacesNodeId,
      data: { replaces: pending.replacesNodeId },
    });
    await notify(tx, CHANNELS.node, pending.replacesNodeId);
    await notify(tx, CHANNELS.node, pending.id);
    return { id: pending.id, state: "revoked" as const };
  });
}

/** Claims on a node that await an admin, newest first (bounded: each costs a token use). */
export async function pendingClaimsOn(db: DbOrTx, nodeId: string) {
  return db
    .select({ id: nodes.id, address: nodes.enrolledFrom, at: nodes.createdAt, hostname: sql<string>`${nodes.profile}->>'hostname'` })
    .from(nodes)
    .where(and(eq(nodes.replacesNodeId, nodeId), inArray(nodes.state, ["pending"])))
    .orderBy(desc(nodes.createdAt))
    .limit(20);
}
