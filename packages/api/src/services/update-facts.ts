// A host's profile and inventory, sent again when they changed: stored, and the
// node recompiled (a profile fact may select roles).
import { eq, sql } from "drizzle-orm";
import { nodes } from "@mesh/db";
import type { Inventory, Profile } from "@mesh/protocol";
import type { Deps } from "../deps";
import { contentHash } from "../compile/hash";
import { recordEvent } from "./record-event";
import { loadRoles, lockCompiler, recompileNode } from "./recompile-node";

export async function updateFacts(deps: Pick<Deps, "db" | "grants">, nodeId: string, facts: { profile: Profile; inventory: Inventory }) {
  const inventoryHash = contentHash(facts.inventory);
  return deps.db.transaction(async (tx) => {
    const [node] = await tx.select({ profile: nodes.profile, inventoryHash: nodes.inventoryHash }).from(nodes).where(eq(nodes.id, nodeId)).for("update");
    if (!node) return false;
    const profileChanged = contentHash(node.profile) !== contentHash(facts.profile);
    if (!profileChanged && node.inventoryHash === inventoryHash) return false;
    await tx
      .update(nodes)
      .set({ profile: facts.profile, inventory: facts.inventory, inventoryHash, hostVersion: facts.profile.hostVersion, updatedAt: sql`now()` })
      .where(eq(nodes.id, nodeId));
    await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.facts", nodeId, data: { profileChanged, packages: facts.inventory.packages.length } });
    if (profileChanged) {
      await lockCompiler(tx);
      await recompileNode(tx, nodeId, { roles: await loadRoles(tx), actor: `node:${nodeId}`, grants: deps.grants });
    }
    return true;
  });
}
