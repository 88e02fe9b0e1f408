// node.setLabels: labels select roles, so a change recompiles the node.
import { z } from "zod";
import { eq, sql } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { Labels } from "@mesh/protocol";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { recordEvent } from "./record-event";
import { loadRoles, lockCompilerShared, recompileNode } from "./recompile-node";
import { checkConflicts, refuseNewConflicts } from "./check-conflicts";

export const SetLabelsInput = z.strictObject({
  id: z.uuid(),
  labels: Labels,
  /** Save even though the new labels put the node into a conflict it does not have now. */
  confirmConflicts: z.boolean().optional(),
});

export async function setLabels(deps: Deps, opts: { actor: string; input: z.infer<typeof SetLabelsInput> }) {
  return deps.db.transaction(async (tx) => {
    // The compiler lock before any node row: a role change takes them in this order (no deadlock).
    await lockCompilerShared(tx);
    // Then the node's row, before the check reads its labels: a concurrent edit of this node commits
    // first or waits, so the conflicts checked against are the ones the save replaces.
    const [locked] = await tx.select({ id: nodes.id }).from(nodes).where(eq(nodes.id, opts.input.id)).for("update");
    if (!locked) throw new MeshError("NOT_FOUND", `no node with id ${opts.input.id}`);
    const check = await checkConflicts(tx, { labels: [{ id: opts.input.id, labels: opts.input.labels }] });
    refuseNewConflicts(check, opts.input.confirmConflicts);
    const [node] = await tx
      .update(nodes)
      .set({ labels: opts.input.labels, updatedAt: sql`now()` })
      .where(eq(nodes.id, opts.input.id))
      .returning({ id: nodes.id, labels: nodes.labels });
    if (!node) throw new MeshError("NOT_FOUND", `no node with id ${opts.input.id}`);
    await recordEvent(tx, {
      actor: opts.actor,
      action: "node.set-labels",
      nodeId: node.id,
      data: { labels: node.labels, ...(check.nodes > 0 ? { confirmedConflicts: check.conflicts.map((c) => ({ key: c.key, roles: c.roles })) } : {}) },
    });
    const result = await recompileNode(tx, node.id, { roles: await loadRoles(tx), actor: opts.actor, grants: deps.grants });
    return { id: node.id, labels: node.labels, declaredVersion: result.version, conflicts: result.conflicts };
  });
}
