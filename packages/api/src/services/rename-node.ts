// node.rename: an admin gives a node the name the dashboard shows (issue 13); an empty name gives
// back the hostname. The hostname itself stays the host's word (nodes.name).
import { z } from "zod";
import { eq, sql } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { recordEvent } from "./record-event";

export const NODE_NAME_MAX = 64;

export const RenameNodeInput = z.strictObject({
  id: z.uuid(),
  /** The display name; "" (or only spaces) goes back to the hostname. */
  name: z
    .string()
    .max(NODE_NAME_MAX, `a name is at most ${NODE_NAME_MAX} characters`)
    .transform((s) => s.trim())
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "a name has no control characters"),
});

export async function renameNode(deps: Pick<Deps, "db">, opts: { actor: string; input: z.infer<typeof RenameNodeInput> }) {
  const displayName = opts.input.name === "" ? null : opts.input.name;
  return deps.db.transaction(async (tx) => {
    const [before] = await tx.select({ displayName: nodes.displayName, hostname: nodes.name }).from(nodes).where(eq(nodes.id, opts.input.id)).for("update");
    if (!before) throw new MeshError("NOT_FOUND", `no node with id ${opts.input.id}`);
    const [node] = await tx
      .update(nodes)
      .set({ displayName, updatedAt: sql`now()` })
      .where(eq(nodes.id, opts.input.id))
      .returning({ id: nodes.id, displayName: nodes.displayName, hostname: nodes.name });
    await recordEvent(tx, {
      actor: opts.actor,
      action: "node.rename",
      nodeId: node!.id,
      data: { from: before.displayName, to: displayName, hostname: before.hostname },
    });
    return { id: node!.id, name: node!.displayName ?? node!.hostname, displayName: node!.displayName, hostname: node!.hostname };
  });
}
