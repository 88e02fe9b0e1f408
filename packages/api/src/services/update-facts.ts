// A host's profile and inventory, sent again when they changed: stored, and the
// node recompiled (a profile fact may select roles). Identity facts stay pinned.
import { eq, sql } from "drizzle-orm";
import { nodes } from "@mesh/db";
import type { Inventory, Profile } from "@mesh/protocol";
import type { Deps } from "../deps";
import { contentHash } from "../compile/hash";
import { recordEvent } from "./record-event";
import { currentDeclaration, loadRoles, lockCompiler, recompileNode } from "./recompile-node";

/**
 * Pinned at enrolment: a host that reports another machine-id or hostname is either a
 * clone or lying; the node keeps its enrolled values (re-enrolment is how they change).
 */
const IDENTITY_FACTS = ["machineId", "hostname"] as const;

export async function updateFacts(deps: Pick<Deps, "db" | "grants">, nodeId: string, facts: { profile: Profile; inventory: Inventory }) {
  const inventoryHash = contentHash(facts.inventory);
  return deps.db.transaction(async (tx) => {
    const [node] = await tx
      .select({ profile: nodes.profile, inventoryHash: nodes.inventoryHash, machineId: nodes.machineId })
      .from(nodes)
      .where(eq(nodes.id, nodeId))
      .for("update");
    if (!node) return false;
    const pinned = { ...(node.profile as Profile), machineId: node.machineId };
    const refused = IDENTITY_FACTS.filter((k) => facts.profile[k] !== pinned[k]);
    if (refused.length > 0) {
      const claimed = Object.fromEntries(refused.map((k) => [k, String(facts.profile[k]).slice(0, 128)]));
      await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.facts-refused", nodeId, result: "refused", data: { reason: "identity facts are pinned at enrolment", claimed } });
    }
    const profile: Profile = { ...facts.profile, machineId: pinned.machineId, hostname: pinned.hostname };
    const profileChanged = contentHash(node.profile) !== contentHash(profile);
    if (!profileChanged && node.inventoryHash === inventoryHash) return refused.length > 0;
    await tx
      .update(nodes)
      .set({ profile, inventory: facts.inventory, inventoryHash, hostVersion: profile.hostVersion, updatedAt: sql`now()` })
      .where(eq(nodes.id, nodeId));
    await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.facts", nodeId, data: { profileChanged, packages: facts.inventory.packages.length } });
    if (profileChanged) {
      await lockCompiler(tx);
      const before = (await currentDeclaration(tx, nodeId))?.roles ?? [];
      const result = await recompileNode(tx, nodeId, { roles: await loadRoles(tx), actor: `node:${nodeId}`, grants: deps.grants });
      if (result.changed) {
        // Facts are the host's word: every role they moved it into or out of is on record.
        const after = (await currentDeclaration(tx, nodeId))?.roles ?? [];
        const entered = after.filter((r) => !before.includes(r));
        const left = before.filter((r) => !after.includes(r));
        if (entered.length > 0 || left.length > 0) {
          await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.roles-changed", nodeId, data: { cause: "facts", entered, left } });
        }
      }
    }
    return true;
  });
}
