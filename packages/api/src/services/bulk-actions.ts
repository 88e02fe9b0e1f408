// Bulk actions from the Fleet (issue 13): set labels, retire, revoke and forget many nodes in one call.
// One transaction, set-based statements (the nodes read and locked at once, one UPDATE, one INSERT of
// declarations), ONE audit event with the ids, one notification per channel: never a write, an event
// or a notice per node. The same rules as the single-node services (lifecycle.ts, set-labels.ts):
// a call that names any node in the wrong state is refused whole, naming it.
import { dropNodePins } from "./role-pins";
import { z } from "zod";
import { and, isNull, sql } from "drizzle-orm";
import { grants, nodes, notify, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import { LabelKey, Labels, LIVE_NODE_STATES } from "@mesh/protocol";
import { checkConflicts, refuseNewConflicts } from "./check-conflicts";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { declarationHash } from "../compile/compile-declaration";
import { recordEvent } from "./record-event";
import { appendDeclarations, pruneHistory, storeBodies, type DeclarationRow } from "./declaration-store";
import { lockCompiler, lockCompilerShared } from "./recompile-node";
import { lockFleetRows, recompileFleet } from "./recompile-fleet";
import { idIn, IDS_IN_EVENT, loadNodeSet, NodeIds, requireStates, type SetNode } from "./node-set";

export const BulkSetLabelsInput = z
  .strictObject({
    ids: NodeIds,
    /** Labels added or overwritten on every node. */
    set: Labels.default({}),
    /** Label keys removed from every node. */
    remove: z.array(LabelKey).max(64).default([]),
    /** Save even though the change puts nodes into a new conflict (refused otherwise, naming it). */
    confirmConflicts: z.boolean().default(false),
  })
  .refine((i) => Object.keys(i.set).length > 0 || i.remove.length > 0, "set or remove at least one label")
  .refine((i) => !i.remove.some((k) => k in i.set), "a label cannot be both set and removed");
export const BulkRetireInput = z.strictObject({ ids: NodeIds, keepResources: z.boolean().default(false) });
export const BulkIdsInput = z.strictObject({ ids: NodeIds });

const idsData = (rows: Array<{ id: string }>) => ({ nodes: rows.length, nodeIds: rows.slice(0, IDS_IN_EVENT).map((r) => r.id) });

/** Closes links: one node's by its notice; many by asking every gateway to check every link it holds. */
async function closeLinks(tx: DbOrTx, ids: string[], reason: "revoked") {
  if (ids.length === 0) return;
  await notify(tx, CHANNELS.link, ids.length === 1 ? `${ids[0]} ${reason}` : `${MANY_NODES} ${reason}`);
}

/** Marks every open grant of these nodes revoked in one statement; the settler does the provider's part after commit. */
async function markGrantsRevoked(tx: DbOrTx, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await tx
    .update(grants)
    .set({ revokedAt: sql`now()`, secret: null, settledAt: null })
    .where(and(sql`${grants.nodeId} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`, isNull(grants.revokedAt)))
    .returning({ id: grants.id });
  if (rows.length > 0) await notify(tx, CHANNELS.grant, rows.length === 1 ? rows[0]!.id : MANY_NODES);
  return rows.length;
}

/**
 * Revokes these nodes, the rows already locked: state, links closed, grants marked revoked (the settler
 * cuts them off at their providers after commit). Set-based; the caller writes the audit event. Returns
 * the grants revoked. Also what the revoke-offline policy uses (revoke-offline.ts).
 */
export async function revokeSet(tx: DbOrTx, rows: Array<Pick<SetNode, "id">>): Promise<number> {
  const ids = rows.map((r) => r.id);
  if (ids.length === 0) return 0;
  await tx.update(nodes).set({ state: "revoked", revokedAt: sql`now()`, gatewayId: null, updatedAt: sql`now()` }).where(idIn(ids));
  await closeLinks(tx, ids, "revoked");
  await dropNodePins(tx, ids);
  return markGrantsRevoked(tx, ids);
}

export async function bulkSetLabels(deps: Deps, opts: { actor: string; input: z.input<typeof BulkSetLabelsInput> }) {
  const input = BulkSetLabelsInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    // The compiler lock before any node row (the order a fleet compile takes them in).
    await lockCompiler(tx);
    // Then every row this call writes, the fleet compile's and the named nodes', in ONE statement in id
    // order: locking the named ones first and the fleet after would break the id order the presence and
    // report batches lock in, and deadlock with them.
    await lockFleetRows(tx, input.ids);
    const rows = await loadNodeSet(tx, input.ids);
    const changed = rows.map((r) => {
      const labels: Record<string, string> = { ...r.labels, ...input.set };
      for (const key of input.remove) delete labels[key];
      const checked = Labels.safeParse(labels);
      if (!checked.success) throw new MeshError("BAD_INPUT", `${r.name} would have ${checked.error.issues[0]?.message ?? "invalid labels"}`);
      return { id: r.id, labels };
    });
    // The same rule as one node's label edit: a new conflict is refused, naming it, unless confirmed.
    const check = await checkConflicts(tx, { labels: changed });
    refuseNewConflicts(check, input.confirmConflicts);
    await tx.execute(sql`
      update ${nodes} set labels = v.labels, updated_at = now()
      from jsonb_to_recordset(${JSON.stringify(changed)}::jsonb) as v(id uuid, labels jsonb)
      where ${nodes.id} = v.id`);
    await recordEvent(tx, {
      actor: opts.actor,
      action: "node.bulk-set-labels",
      data: {
        ...idsData(rows),
        set: input.set,
        remove: input.remove,
        ...(check.conflicts.length ? { acceptedConflicts: check.conflicts.map((c) => ({ key: c.key, roles: c.roles, nodes: c.nodes })) } : {}),
      },
    });
    await notify(tx, CHANNELS.node, rows.length === 1 ? rows[0]!.id : MANY_NODES);
    // The fleet compile: one compile per distinct set of matched roles, set-based writes, one "*" notice.
    const compile = await recompileFleet(tx, { actor: opts.actor, grants: deps.grants });
    const ids = new Set(input.ids);
    return { nodes: rows.length, changed: compile.changed, conflicts: compile.conflicts.filter((c) => ids.has(c.nodeId)) };
  });
}

export async function bulkRetire(deps: Deps, opts: { actor: string; input: z.input<typeof BulkRetireInput> }) {
  const input = BulkRetireInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    await lockCompilerShared(tx);
    const rows = await loadNodeSet(tx, input.ids, { lock: true });
    requireStates(rows, LIVE_NODE_STATES, "retired");
    const final = input.keepResources ? "forget" : "remove";
    const hash = declarationHash([]);
    await storeBodies(tx, [{ hash, resources: [] }]);
    const appended: DeclarationRow[] = rows.map((r) => ({ nodeId: r.id, version: r.declaredVersion + 1, hash, roles: [], final }));
    await appendDeclarations(tx, appended);
    await tx
      .update(nodes)
      .set({ state: "retiring", retireMode: final, declaredVersion: sql`${nodes.declaredVersion} + 1`, conflicts: [], updatedAt: sql`now()` })
      .where(idIn(input.ids));
    await pruneHistory(tx, appended);
    await recordEvent(tx, { actor: opts.actor, action: "node.bulk-retire", data: { ...idsData(rows), keepResources: input.keepResources } });
    await notify(tx, CHANNELS.declaration, rows.length === 1 ? rows[0]!.id : MANY_NODES);
    await notify(tx, CHANNELS.node, rows.length === 1 ? rows[0]!.id : MANY_NODES);
    return { nodes: rows.length, state: "retiring" as const };
  });
}

export async function bulkRevoke(deps: Deps, opts: { actor: string; input: z.input<typeof BulkIdsInput> }) {
  const input = BulkIdsInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    const rows = await loadNodeSet(tx, input.ids, { lock: true });
    requireStates(rows, ["pending", "enrolled", "disconnected", "retiring"], "revoked");
    const grantsRevoked = await revokeSet(tx, rows);
    await recordEvent(tx, { actor: opts.actor, action: "node.bulk-revoke", data: { ...idsData(rows), grantsRevoked } });
    await notify(tx, CHANNELS.node, rows.length === 1 ? rows[0]!.id : MANY_NODES);
    return { nodes: rows.length, state: "revoked" as const, grantsRevoked };
  });
}

/**
 * Forget: retired and revoked nodes leave the Fleet list (soft: the row and its audit history stay).
 * A node stuck `retiring` (its host never came back) is revoked as it is forgotten: a node nobody
 * sees must not keep a key that links. Neither does anything to the machine.
 */
export async function forgetNodes(deps: Deps, opts: { actor: string; input: z.input<typeof BulkIdsInput> }) {
  const input = BulkIdsInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    const rows = await loadNodeSet(tx, input.ids, { lock: true });
    requireStates(rows, ["retired", "revoked", "retiring"], "forgotten");
    const retiring = rows.filter((r) => r.state === "retiring");
    const grantsRevoked = await revokeSet(tx, retiring);
    await tx
      .update(nodes)
      .set({ forgottenAt: sql`coalesce(${nodes.forgottenAt}, now())`, updatedAt: sql`now()` })
      .where(idIn(input.ids));
    await recordEvent(tx, {
      actor: opts.actor,
      action: "node.forget",
      nodeId: rows.length === 1 ? rows[0]!.id : null,
      data: { ...idsData(rows), revoked: retiring.map((r) => r.id), grantsRevoked },
    });
    await notify(tx, CHANNELS.node, rows.length === 1 ? rows[0]!.id : MANY_NODES);
    return { nodes: rows.length, revoked: retiring.length, grantsRevoked };
  });
}
