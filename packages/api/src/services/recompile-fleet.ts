// Recompiles the whole fleet after a role change, set-based: the compiler runs once per
// distinct set of matched roles, and the writes are a handful of statements whatever the
// number of nodes (issue 11). Single-node paths keep recompileNode (recompile-node.ts).
import { profileFacts } from "./profile-facts";
import { and, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { declarations, grants as grantsTable, nodes, notify, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import type { Role } from "@mesh/protocol";
import { compileDeclaration, declarationHash, type CompiledDeclaration, type Conflict } from "../compile/compile-declaration";
import { matchesSelector } from "../compile/selector";
import { ensureGrants } from "../grants/ensure-node-grants";
import { recordEvent } from "./record-event";
import { COMPILABLE_STATES, loadRoles, lockCompiler, type CompileContext, type VersionedRole } from "./recompile-node";
import { effectiveRoles, loadPinnedRoles, loadPins, roleVersionsOf } from "./role-pins";
import { appendDeclarations, pruneBodies, pruneHistory, storeBodies, type DeclarationRow } from "./declaration-store";

/** Node ids named in a conflict event; the count says how many there were in all. */
const CONFLICT_IDS_IN_EVENT = 100;
/** Distinct bodies listed in the compile event (the bodies count says how many there were). */
const BODIES_IN_EVENT = 100;

export interface FleetCompileResult {
  /** Nodes that got a new declaration version. */
  changed: number;
  unchanged: number;
  /** Every node in conflict after the compile (new or not), with its conflicts. */
  conflicts: Array<{ nodeId: string; conflicts: Conflict[] }>;
  /** Distinct bodies the changed nodes now hold. */
  bodies: number;
}

interface FleetNode {
  id: string;
  labels: Record<string, string>;
  profile: Record<string, unknown>;
  declaredVersion: number;
  conflicts: Conflict[];
  hash: string | null;
}

/**
 * What the compiler's result depends on: which roles a node matches. compileDeclaration is
 * a pure function of the matched roles (it sorts them by name), so one compile serves every
 * node with the same matched set, whatever else differs in their labels and profiles. A node
 * with pins (role-pins.ts) matches other versions of some roles: the caller appends the pins.
 */
function matchedKey(node: FleetNode, roles: Role[]): string {
  let key = "";
  for (let i = 0; i < roles.length; i++) key += matchesSelector(roles[i]!.selector, node) ? "1" : "0";
  return key;
}

/** "Compilable, or one of these ids": the rows a fleet compile (and a change made with it) locks. */
const fleetRows = (extraIds: string[]) =>
  extraIds.length === 0
    ? inArray(nodes.state, [...COMPILABLE_STATES])
    : or(inArray(nodes.state, [...COMPILABLE_STATES]), sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(extraIds)}::jsonb)::uuid)`)!;

/**
 * Locks every compilable node, and these ids besides, in ONE statement in id order: the order the
 * liveness and report batches lock rows in (presence-batch.ts, report-batch.ts). A change that then
 * runs recompileFleet must take its rows here first: holding a few rows and then sweeping the fleet
 * would lock out of id order and deadlock with a batch. Call after lockCompiler (which keeps the
 * compilable set from growing until commit).
 */
export async function lockFleetRows(tx: DbOrTx, extraIds: string[] = []): Promise<void> {
  await tx.select({ id: nodes.id }).from(nodes).where(fleetRows(extraIds)).orderBy(nodes.id).for("update");
}

export interface FleetCompileOptions {
  /**
   * Only these nodes (those of them that are compilable): a rollout wave's release, whose other nodes
   * cannot change (only the released nodes' pins were deleted). Locks and compiles only them.
   */
  ids?: string[];
}

/**
 * Recompiles every node that can still receive a declaration (or only opts.ids), each with its effective
 * role versions: the newest, or the version a pin names (role-pins.ts). Must run inside a transaction.
 */
export async function recompileFleet(tx: DbOrTx, ctx: Omit<CompileContext, "roles">, opts: FleetCompileOptions = {}): Promise<FleetCompileResult> {
  const { actor } = ctx;
  await lockCompiler(tx);
  const roles = await loadRoles(tx);
  // Every pin (or the named nodes') and the role versions they name: two queries whatever the fleet.
  const pins = await loadPins(tx, opts.ids);
  const pinned = await loadPinnedRoles(tx, pins);
  // Selectors read a few profile facts: only those are loaded (a profile is most of a row's width).
  const profile = profileFacts([...roles, ...pinned.values()].map((r) => r.selector));
  // Locked in id order (as lockFleetRows does; rows a caller locked there are held already): versions
  // stay monotonic against a concurrent single-node write, and it is the order the liveness code
  // locks rows in (no deadlock, see presence.ts).
  const fleet: FleetNode[] = (
    await tx
      .select({ id: nodes.id, labels: nodes.labels, profile, declaredVersion: nodes.declaredVersion, conflicts: nodes.conflicts, hash: declarations.hash })
      .from(nodes)
      .leftJoin(declarations, and(eq(declarations.nodeId, nodes.id), eq(declarations.version, nodes.declaredVersion)))
      .where(opts.ids === undefined ? fleetRows([]) : and(inArray(nodes.state, [...COMPILABLE_STATES]), sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(opts.ids)}::jsonb)::uuid)`))
      .orderBy(nodes.id)
      .for("update", { of: nodes })
  ).map((n) => ({ ...n, profile: n.profile as Record<string, unknown> }));

  // The group key: the matched roles, and the pinned versions (a pinned node matches with those).
  const compiledBy = new Map<string, CompiledDeclaration & { roleVersions: Record<string, number> }>();
  const compiledOf = (node: FleetNode) => {
    const effective: { roles: VersionedRole[]; pinSignature: string } = effectiveRoles(roles, pins.get(node.id), pinned);
    const key = matchedKey(node, effective.roles) + effective.pinSignature;
    let compiled = compiledBy.get(key);
    if (!compiled) {
      const c = compileDeclaration({ labels: node.labels, profile: node.profile }, effective.roles);
      compiledBy.set(key, (compiled = { ...c, roleVersions: roleVersionsOf(c.roles, effective.roles) }));
    }
    return compiled;
  };

  // Grants are per node by nature (per-node credentials): nodes whose roles declare one, and,
  // with a provider configured, nodes still holding one (it must be revoked), take that path.
  const holdingGrants = ctx.grants
    ? new Set((await tx.selectDistinct({ nodeId: grantsTable.nodeId }).from(grantsTable).where(isNull(grantsTable.revokedAt))).map((g) => g.nodeId))
    : new Set<string>();

  const conflictChanges: Array<{ id: string; conflicts: Conflict[] }> = [];
  const inConflict: FleetCompileResult["conflicts"] = [];
  const compiledFor: Array<{ node: FleetNode; compiled: CompiledDeclaration & { roleVersions: Record<string, number> } }> = [];
  for (const node of fleet) {
    const compiled = compiledOf(node);
    if (JSON.stringify(node.conflicts) !== JSON.stringify(compiled.conflicts)) conflictChanges.push({ id: node.id, conflicts: compiled.conflicts });
    // A conflict pushes nothing: the node keeps its last good declaration.
    if (compiled.conflicts.length > 0) inConflict.push({ nodeId: node.id, conflicts: compiled.conflicts });
    else compiledFor.push({ node, compiled });
  }
  // Every node's grants at once: issued, kept or revoked in a few statements (ensure-node-grants.ts).
  const grantFiles = await ensureGrants(
    tx,
    ctx.grants,
    compiledFor.filter(({ node, compiled }) => compiled.grants.length > 0 || holdingGrants.has(node.id)).map(({ node, compiled }) => ({ nodeId: node.id, declared: compiled.grants })),
    actor,
  );

  const newRows: Array<DeclarationRow & { resources: unknown[] }> = [];
  let unchanged = 0;
  for (let { node, compiled } of compiledFor) {
    const files = grantFiles.get(node.id);
    if (files) {
      const resources = [...compiled.resources, ...files].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      compiled = { ...compiled, resources, hash: declarationHash(resources) };
    }
    if (node.hash === compiled.hash) {
      unchanged++;
      continue;
    }
    newRows.push({ nodeId: node.id, version: node.declaredVersion + 1, hash: compiled.hash, roles: compiled.roles, roleVersions: compiled.roleVersions, resources: compiled.resources });
  }

  if (conflictChanges.length > 0) {
    await tx.execute(sql`
      update ${nodes} set conflicts = v.conflicts, updated_at = now()
      from jsonb_to_recordset(${JSON.stringify(conflictChanges)}::jsonb) as v(id uuid, conflicts jsonb)
      where ${nodes.id} = v.id`);
    const newlyConflicted = conflictChanges.filter((c) => c.conflicts.length > 0);
    if (newlyConflicted.length > 0) {
      await recordEvent(tx, {
        actor,
        action: "declaration.conflict",
        result: "refused",
        data: {
          nodes: newlyConflicted.length,
          nodeIds: newlyConflicted.slice(0, CONFLICT_IDS_IN_EVENT).map((c) => c.id),
          // Distinct conflicts, each named once, whatever the number of nodes that hit it.
          conflicts: [...new Map(newlyConflicted.flatMap((c) => c.conflicts).map((c) => [JSON.stringify(c), c])).values()],
        },
      });
    }
    // Wakes views only; "*" = any number of nodes changed (bus.ts).
    await notify(tx, CHANNELS.node, conflictChanges.length === 1 ? conflictChanges[0]!.id : MANY_NODES);
  }

  const byHash = new Map<string, { hash: string; roles: string[]; nodes: number }>();
  for (const row of newRows) {
    const seen = byHash.get(row.hash);
    if (seen) seen.nodes++;
    else byHash.set(row.hash, { hash: row.hash, roles: row.roles, nodes: 1 });
  }
  if (newRows.length > 0) {
    await storeBodies(tx, newRows);
    await appendDeclarations(tx, newRows);
    await tx.execute(sql`
      update ${nodes} set declared_version = v.version, updated_at = now()
      from jsonb_to_recordset(${JSON.stringify(newRows.map((r) => ({ id: r.nodeId, version: r.version })))}::jsonb) as v(id uuid, version int)
      where ${nodes.id} = v.id`);
    await pruneHistory(tx, newRows);
    // Bodies only the pruned versions named: once per fleet compile, not per node.
    await pruneBodies(tx);
    const versions = [...new Set(newRows.map((r) => r.version))].sort((a, b) => a - b);
    await recordEvent(tx, {
      actor,
      action: "declaration.compile",
      data: {
        changed: newRows.length,
        unchanged,
        conflicted: inConflict.length,
        bodies: byHash.size,
        versions: { min: versions[0], max: versions.at(-1) },
        // Per distinct body; grant-bearing nodes each have their own, so the list is capped.
        byHash: [...byHash.values()].sort((a, b) => b.nodes - a.nodes).slice(0, BODIES_IN_EVENT),
      },
    });
    // One notification for the whole change: a node id when one node changed, else "*" (bus.ts).
    await notify(tx, CHANNELS.declaration, newRows.length === 1 ? newRows[0]!.nodeId : MANY_NODES);
  }
  return { changed: newRows.length, unchanged, conflicts: inConflict, bodies: byHash.size };
}
