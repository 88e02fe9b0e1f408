// A host's profile and inventory, sent again when they changed: stored, and the
// node recompiled (a profile fact may select roles). Identity facts stay pinned.
import { eq, sql } from "drizzle-orm";
import { nodes, type DbOrTx } from "@mesh/db";
import type { Inventory, Profile } from "@mesh/protocol";
import type { Deps } from "../deps";
import { contentHash } from "../compile/hash";
import { recordEvent } from "./record-event";
import { loadRoles, lockCompilerShared, recompileNode } from "./recompile-node";
import { currentDeclaration } from "./declaration-store";

/**
 * Pinned at enrolment: a host that reports another machine-id or hostname is either a
 * clone or lying; the node keeps its enrolled values (re-enrolment is how they change).
 */
const IDENTITY_FACTS = ["machineId", "hostname"] as const;

export type FactsEvent = "node.facts" | "node.facts-refused" | "node.roles-changed";

/** Whether an event the host caused may be written now, and how many of its kind were left out before it; null: leave it out. */
export type AuditSlot = (action: FactsEvent, detail?: string) => { suppressed: number } | null;

export interface UpdateFactsOptions {
  /** The caller's per-node event budget (the gateway's); without one every event is written. */
  audit?: AuditSlot;
  /** False: only store the facts; the caller recompiles later with recompileForFacts (paced per node). */
  recompile?: boolean;
}

export interface FactsResult {
  /** Something was written. */
  changed: boolean;
  /** The stored profile changed, so the node's roles may have. */
  profileChanged: boolean;
}

const always: AuditSlot = () => ({ suppressed: 0 });
const withSuppressed = (data: Record<string, unknown>, slot: { suppressed: number }) =>
  slot.suppressed > 0 ? { ...data, suppressedEvents: slot.suppressed } : data;

export async function updateFacts(
  deps: Pick<Deps, "db" | "grants">,
  nodeId: string,
  facts: { profile: Profile; inventory: Inventory },
  opts: UpdateFactsOptions = {},
): Promise<FactsResult> {
  const audit = opts.audit ?? always;
  const inventoryHash = contentHash(facts.inventory);
  return deps.db.transaction(async (tx) => {
    // A recompile here takes the compiler lock: before any node row, the order a role change takes them in.
    if (opts.recompile !== false) await lockCompilerShared(tx);
    const [node] = await tx
      .select({ profile: nodes.profile, inventoryHash: nodes.inventoryHash, machineId: nodes.machineId })
      .from(nodes)
      .where(eq(nodes.id, nodeId))
      .for("update");
    if (!node) return { changed: false, profileChanged: false };
    const pinned = { ...(node.profile as Profile), machineId: node.machineId };
    const refused = IDENTITY_FACTS.filter((k) => facts.profile[k] !== pinned[k]);
    let wrote = false;
    if (refused.length > 0) {
      const claimed = Object.fromEntries(refused.map((k) => [k, String(facts.profile[k]).slice(0, 128)]));
      // Once per distinct claim (and within the node's budget): a host repeating its claim adds nothing.
      const slot = audit("node.facts-refused", contentHash(claimed));
      if (slot) {
        await recordEvent(tx, {
          actor: `node:${nodeId}`,
          action: "node.facts-refused",
          nodeId,
          result: "refused",
          data: withSuppressed({ reason: "identity facts are pinned at enrolment", claimed }, slot),
        });
        wrote = true;
      }
    }
    const profile: Profile = { ...facts.profile, machineId: pinned.machineId, hostname: pinned.hostname };
    const profileChanged = contentHash(node.profile) !== contentHash(profile);
    if (!profileChanged && node.inventoryHash === inventoryHash) return { changed: wrote, profileChanged: false };
    await tx
      .update(nodes)
      .set({ profile, inventory: facts.inventory, inventoryHash, hostVersion: profile.hostVersion, updatedAt: sql`now()` })
      .where(eq(nodes.id, nodeId));
    const slot = audit("node.facts");
    if (slot)
      await recordEvent(tx, {
        actor: `node:${nodeId}`,
        action: "node.facts",
        nodeId,
        data: withSuppressed({ profileChanged, packages: facts.inventory.packages.length }, slot),
      });
    if (profileChanged && opts.recompile !== false) await recompileInTx(tx, deps, nodeId, audit);
    return { changed: true, profileChanged };
  });
}

/** Recompiles a node whose stored profile changed (the gateway calls it paced, apart from storing the facts). */
export async function recompileForFacts(deps: Pick<Deps, "db" | "grants">, nodeId: string, opts: { audit?: AuditSlot } = {}): Promise<boolean> {
  return deps.db.transaction((tx) => recompileInTx(tx, deps, nodeId, opts.audit ?? always));
}

async function recompileInTx(tx: DbOrTx, deps: Pick<Deps, "grants">, nodeId: string, audit: AuditSlot): Promise<boolean> {
  await lockCompilerShared(tx);
  const before = (await currentDeclaration(tx, nodeId))?.roles ?? [];
  const result = await recompileNode(tx, nodeId, { roles: await loadRoles(tx), actor: `node:${nodeId}`, grants: deps.grants });
  if (!result.changed) return false;
  // Facts are the host's word: every role they moved it into or out of is on record
  // (in node.roles-changed within the node's budget, and always in declaration.compile's roles).
  const after = (await currentDeclaration(tx, nodeId))?.roles ?? [];
  const entered = after.filter((r) => !before.includes(r));
  const left = before.filter((r) => !after.includes(r));
  if (entered.length > 0 || left.length > 0) {
    const slot = audit("node.roles-changed");
    if (slot)
      await recordEvent(tx, { actor: `node:${nodeId}`, action: "node.roles-changed", nodeId, data: withSuppressed({ cause: "facts", entered, left }, slot) });
  }
  return true;
}
