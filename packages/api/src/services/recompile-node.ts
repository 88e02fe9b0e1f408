// Recompiles one node's declaration from the roles and stores a new version only
// when the content hash changed; the bus tells every gateway after commit.
import { and, eq, sql } from "drizzle-orm";
import { declarations, nodes, roles as rolesTable, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import { LIVE_NODE_STATES, Role } from "@mesh/protocol";
import { compileDeclaration, declarationHash, type Conflict } from "../compile/compile-declaration";
import { ensureNodeGrants } from "../grants/ensure-node-grants";
import type { Grants } from "../grants/provider";
import { recordEvent } from "./record-event";
import { appendDeclaration, pruneNodeHistory } from "./declaration-store";
import { nodeRoles, roleVersionsOf } from "./role-pins";

export const COMPILABLE_STATES = LIVE_NODE_STATES;

const COMPILER_LOCK = 7_240_362;

/**
 * Serialises compilers: a transaction that changed a role must not compile with
 * roles read before another one committed. Call first, then loadRoles.
 */
export async function lockCompiler(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${COMPILER_LOCK})`);
}

/**
 * For a compile of one node (enrolment, labels, facts, replacement): shares the compiler
 * lock with other single-node compiles, so they never wait on each other, but waits for a
 * role or fleet change (which holds it exclusively, lockCompiler) to commit, and such a
 * change waits for them. Two compiles of the same node serialise on its row lock instead.
 * Call first, then loadRoles.
 */
export async function lockCompilerShared(tx: DbOrTx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock_shared(${COMPILER_LOCK})`);
}

/** A role with the number of the version it is (the newest, or the one a pin names: role-pins.ts). */
export type VersionedRole = Role & { version: number };

/** Every role at its newest version. */
export async function loadRoles(db: DbOrTx): Promise<VersionedRole[]> {
  const rows = await db.select().from(rolesTable);
  return rows.map((r) => ({ ...Role.parse({ name: r.name, selector: r.selector, resources: r.resources, grants: r.grants ?? [] }), version: r.version }));
}

export interface RecompileResult {
  nodeId: string;
  version: number;
  changed: boolean;
  conflicts: Conflict[];
}

export interface CompileContext {
  /** The newest roles (loadRoles); the node's pins replace some by older versions (role-pins.ts). */
  roles: VersionedRole[];
  actor: string;
  grants?: Grants;
}

/** Must run inside a transaction: it locks the node row so versions stay monotonic. */
export async function recompileNode(tx: DbOrTx, nodeId: string, ctx: CompileContext): Promise<RecompileResult> {
  const { roles, actor } = ctx;
  const [node] = await tx.select().from(nodes).where(eq(nodes.id, nodeId)).for("update");
  if (!node) throw new Error(`node ${nodeId} vanished`);
  // Retiring, retired and revoked nodes keep the declaration they were given last.
  if (!(COMPILABLE_STATES as readonly string[]).includes(node.state)) return { nodeId, version: node.declaredVersion, changed: false, conflicts: [] };
  // A node pinned by a staged rollout compiles those roles at their pinned versions (role-pins.ts).
  const effective = await nodeRoles(tx, nodeId, roles);
  const compiled = compileDeclaration({ labels: node.labels, profile: node.profile as Record<string, unknown> }, effective);
  if (JSON.stringify(node.conflicts) !== JSON.stringify(compiled.conflicts)) {
    await tx.update(nodes).set({ conflicts: compiled.conflicts, updatedAt: sql`now()` }).where(eq(nodes.id, nodeId));
    if (compiled.conflicts.length > 0)
      await recordEvent(tx, { actor, action: "declaration.conflict", nodeId, result: "refused", data: { conflicts: compiled.conflicts } });
    await notify(tx, CHANNELS.node, nodeId);
  }
  // A conflict pushes nothing: the node keeps its last good declaration.
  if (compiled.conflicts.length > 0) return { nodeId, version: node.declaredVersion, changed: false, conflicts: compiled.conflicts };
  if (compiled.grants.length > 0 || ctx.grants) {
    const grantFiles = await ensureNodeGrants(tx, ctx.grants, nodeId, compiled.grants, actor);
    if (grantFiles.length > 0) {
      compiled.resources = [...compiled.resources, ...grantFiles].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      compiled.hash = declarationHash(compiled.resources);
    }
  }
  const [current] = await tx
    .select({ hash: declarations.hash })
    .from(declarations)
    .where(and(eq(declarations.nodeId, nodeId), eq(declarations.version, node.declaredVersion)));
  if (current && current.hash === compiled.hash) return { nodeId, version: node.declaredVersion, changed: false, conflicts: [] };
  const version = node.declaredVersion + 1;
  await appendDeclaration(tx, {
    nodeId,
    version,
    hash: compiled.hash,
    resources: compiled.resources,
    roles: compiled.roles,
    roleVersions: roleVersionsOf(compiled.roles, effective),
  });
  await tx.update(nodes).set({ declaredVersion: version, updatedAt: sql`now()` }).where(eq(nodes.id, nodeId));
  await pruneNodeHistory(tx, nodeId, version);
  await recordEvent(tx, {
    actor,
    action: "declaration.compile",
    nodeId,
    data: { version, hash: compiled.hash, roles: compiled.roles, resources: compiled.resources.length },
  });
  await notify(tx, CHANNELS.declaration, nodeId);
  return { nodeId, version, changed: true, conflicts: [] };
}

// The fleet-wide compile (a role change) is set-based: recompile-fleet.ts.
