// Recompiles the whole fleet after a role change, set-based: the compiler runs once per
// distinct set of matched roles, and the writes are a handful of statements whatever the
// number of nodes (issue 11). Single-node paths keep recompileNode (recompile-node.ts).
// A role save loads the fleet once (loadFleet) for its conflict check and this compile, and
// both share one compile per distinct set of matched role versions (CompileCache).
import { profileFacts } from "./profile-facts";
import { and, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { declarations, grants as grantsTable, nodes, notify, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import type { Selector } from "@mesh/protocol";
import type { CommittedDeclaration, Deps } from "../deps";
import { compileDeclaration, declarationHash, type CompiledDeclaration, type Conflict } from "../compile/compile-declaration";
import { matchesSelector, type NodeFacts } from "../compile/selector";
import { ensureGrants } from "../grants/ensure-node-grants";
import { recordEvent } from "./record-event";
import { COMPILABLE_STATES, loadRoles, lockCompiler, type CompileContext, type VersionedRole } from "./recompile-node";
import { effectiveRoles, loadPinnedRoles, loadPins, roleVersionsOf, type NodePins } from "./role-pins";
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
  /** The new declarations with their bodies (shared by nodes of one hash): for this process's gateway after commit (pushCommitted). */
  declarations: CommittedDeclaration[];
}

/**
 * After the commit of a fleet compile: this process's gateway, if it runs one, sends the new declarations
 * from the compile's own rows at once (Deps.localPush). Never fails the caller: the notification the
 * compile sent still reaches every gateway, which compares its links with the database.
 */
export function pushCommitted(deps: Pick<Deps, "localPush" | "log">, result: Pick<FleetCompileResult, "declarations">): void {
  if (!deps.localPush || result.declarations.length === 0) return;
  try {
    deps.localPush.committed(result.declarations);
  } catch (err) {
    deps.log.warn({ err }, "local push of committed declarations failed; the notification's path sends them");
  }
}

export interface FleetNode {
  id: string;
  labels: Record<string, string>;
  profile: Record<string, unknown>;
  declaredVersion: number;
  conflicts: Conflict[];
  hash: string | null;
}

/** A compile result and the versions of the roles that made it. */
export type FleetCompiled = CompiledDeclaration & { roleVersions: Record<string, number> };

/**
 * Compiles by what the result depends on: the roles a node matches, by name and version.
 * compileDeclaration is a pure function of the matched roles (it sorts them by name), and a role
 * version is immutable, so one compile serves every node with the same matched versions, whatever
 * else differs in their labels and profiles, and every caller in one transaction (a role save's
 * conflict check, before and after the change, and its compile). A pinned node (role-pins.ts) simply
 * matches other versions of some roles.
 */
export class CompileCache {
  private readonly byKey = new Map<string, FleetCompiled>();
  /** Distinct compiles run (tests count them). */
  compiles = 0;

  of(node: NodeFacts, roles: VersionedRole[]): FleetCompiled {
    let key = "";
    for (const role of roles) if (matchesSelector(role.selector, node)) key += `${role.name}\u0000${role.version}\u0000`;
    let compiled = this.byKey.get(key);
    if (!compiled) {
      const c = compileDeclaration(node, roles);
      this.compiles++;
      this.byKey.set(key, (compiled = { ...c, roleVersions: roleVersionsOf(c.roles, roles) }));
    }
    return compiled;
  }
}

/** The fleet as a role save reads it once, under the compiler lock: roles, pins, and the node rows locked. */
export interface LoadedFleet {
  /** The newest roles, by name. */
  roles: VersionedRole[];
  /** The profile facts the nodes' rows were read with. */
  factKeys: Set<string>;
  nodes: FleetNode[];
}

/** The roles with `role` put in (replacing its older version), still by name. */
export function withRole(roles: VersionedRole[], role: VersionedRole): VersionedRole[] {
  return [...roles.filter((r) => r.name !== role.name), role].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const selectorKeys = (selectors: Array<Pick<Selector, "profile">>) => selectors.flatMap((s) => Object.keys(s.profile ?? {}));

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
  /**
   * The fleet the caller loaded (loadFleet, rows locked) in this transaction, with the roles as they
   * are now (its change put in): not read again. Pins are read again (the caller may have written some).
   */
  fleet?: LoadedFleet;
  /** The compiles the caller already ran in this transaction (its conflict check). */
  compiles?: CompileCache;
}

/**
 * Reads the fleet a compile needs, in one statement for the nodes: every compilable node (or only
 * those of `ids`) with its labels, the profile facts the roles' selectors read (the newest roles, the
 * pinned versions, and `selectors` besides: a proposed change's), its declared version, conflicts and
 * declaration hash, locked in id order (as lockFleetRows does: versions stay monotonic against a
 * concurrent single-node write, and it is the order the liveness code locks rows in). Call after
 * lockCompiler. `lock: false` reads without locking (a check that writes nothing).
 */
export async function loadFleet(
  tx: DbOrTx,
  opts: { ids?: string[]; selectors?: Array<Pick<Selector, "profile">>; lock?: boolean } = {},
): Promise<LoadedFleet & { pins: NodePins; pinned: Map<string, VersionedRole> }> {
  const roles = (await loadRoles(tx)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Every pin (or the named nodes') and the role versions they name: two queries whatever the fleet.
  const pins = await loadPins(tx, opts.ids);
  const pinned = await loadPinnedRoles(tx, pins);
  // Selectors read a few profile facts: only those are loaded (a profile is most of a row's width).
  const selectors = [...roles, ...pinned.values()].map((r) => r.selector).concat(opts.selectors ?? []);
  const query = tx
    .select({
      id: nodes.id,
      labels: nodes.labels,
      profile: profileFacts(selectors),
      declaredVersion: nodes.declaredVersion,
      conflicts: nodes.conflicts,
      hash: declarations.hash,
    })
    .from(nodes)
    .leftJoin(declarations, and(eq(declarations.nodeId, nodes.id), eq(declarations.version, nodes.declaredVersion)))
    .where(
      opts.ids === undefined
        ? fleetRows([])
        : and(inArray(nodes.state, [...COMPILABLE_STATES]), sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(opts.ids)}::jsonb)::uuid)`),
    )
    .orderBy(nodes.id);
  const nodesRead = (await (opts.lock === false ? query : query.for("update", { of: nodes }))).map((n) => ({
    ...n,
    profile: n.profile as Record<string, unknown>,
  }));
  return { roles, factKeys: new Set(selectorKeys(selectors)), nodes: nodesRead, pins, pinned };
}

/**
 * Recompiles every node that can still receive a declaration (or only opts.ids), each with its effective
 * role versions: the newest, or the version a pin names (role-pins.ts). Must run inside a transaction.
 */
export async function recompileFleet(tx: DbOrTx, ctx: Omit<CompileContext, "roles">, opts: FleetCompileOptions = {}): Promise<FleetCompileResult> {
  const { actor } = ctx;
  await lockCompiler(tx);
  let loaded: LoadedFleet;
  let pins: NodePins;
  let pinned: Map<string, VersionedRole>;
  if (opts.fleet) {
    // The caller's fleet, read before its writes: the pins again (a staged save wrote some), and the
    // whole fleet again only if a pinned version reads a profile fact its rows were read without.
    loaded = opts.fleet;
    pins = await loadPins(tx, opts.ids);
    pinned = await loadPinnedRoles(tx, pins);
    const factKeys = loaded.factKeys;
    if (selectorKeys([...pinned.values()].map((r) => r.selector)).some((k) => !factKeys.has(k)))
      loaded = { ...(await loadFleet(tx, { ids: opts.ids })), roles: opts.fleet.roles };
  } else {
    const fresh = await loadFleet(tx, { ids: opts.ids });
    ({ pins, pinned } = fresh);
    loaded = fresh;
  }
  const { roles, nodes: fleet } = loaded;
  const cache = opts.compiles ?? new CompileCache();
  const compiledOf = (node: FleetNode) => cache.of({ labels: node.labels, profile: node.profile }, effectiveRoles(roles, pins.get(node.id), pinned).roles);

  // Grants are per node by nature (per-node credentials): nodes whose roles declare one, and,
  // with a provider configured, nodes still holding one (it must be revoked), take that path.
  const holdingGrants = ctx.grants
    ? new Set((await tx.selectDistinct({ nodeId: grantsTable.nodeId }).from(grantsTable).where(isNull(grantsTable.revokedAt))).map((g) => g.nodeId))
    : new Set<string>();

  const conflictChanges: Array<{ id: string; conflicts: Conflict[] }> = [];
  const inConflict: FleetCompileResult["conflicts"] = [];
  const compiledFor: Array<{ node: FleetNode; compiled: FleetCompiled }> = [];
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
    compiledFor
      .filter(({ node, compiled }) => compiled.grants.length > 0 || holdingGrants.has(node.id))
      .map(({ node, compiled }) => ({ nodeId: node.id, declared: compiled.grants })),
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
    newRows.push({
      nodeId: node.id,
      version: node.declaredVersion + 1,
      hash: compiled.hash,
      roles: compiled.roles,
      roleVersions: compiled.roleVersions,
      resources: compiled.resources,
    });
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
  return { changed: newRows.length, unchanged, conflicts: inConflict, bodies: byHash.size, declarations: newRows };
}
