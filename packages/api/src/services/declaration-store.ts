// Content-addressed declarations (decision 0018): bodies are stored once by hash, a node's
// history is (node, version, hash). Every read and write of declarations goes through here.
import { and, desc, eq, inArray, lte, sql } from "drizzle-orm";
import { declarationBodies, declarations, nodes, type DbOrTx } from "@mesh/db";
import type { Resource } from "@mesh/protocol";

/**
 * Versions kept per node: the current one, the one before it (a host may still be applying
 * it, see node-declares-file.ts) and some history; older ones are deleted as new ones come,
 * so a node recompiled in a loop cannot grow the table without bound.
 */
export const DECLARATION_HISTORY_PER_NODE = 50;

export interface DeclarationBody {
  hash: string;
  resources: unknown[];
}

/**
 * Stores bodies not stored yet, in one statement with one parameter whatever their number
 * (a fleet compile may bring thousands); a body already there is left as it is.
 */
export async function storeBodies(tx: DbOrTx, bodies: DeclarationBody[]): Promise<void> {
  const unique = [...new Map(bodies.map((b) => [b.hash, { hash: b.hash, resources: b.resources }])).values()];
  if (unique.length === 0) return;
  await tx.execute(sql`
    insert into ${declarationBodies} (hash, resources)
    select b.hash, b.resources from jsonb_to_recordset(${JSON.stringify(unique)}::jsonb) as b(hash text, resources jsonb)
    on conflict (hash) do nothing`);
}

/** Bodies by hash, in one query. */
export async function loadBodies(db: DbOrTx, hashes: string[]): Promise<Map<string, Resource[]>> {
  const unique = [...new Set(hashes)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .select({ hash: declarationBodies.hash, resources: declarationBodies.resources })
    .from(declarationBodies)
    .where(inArray(declarationBodies.hash, unique));
  return new Map(rows.map((r) => [r.hash, r.resources as Resource[]]));
}

export interface DeclarationRow {
  nodeId: string;
  version: number;
  hash: string;
  roles: string[];
  /** { role: version } of the roles that made it (issue 14). */
  roleVersions?: Record<string, number>;
  final?: "remove" | "forget" | null;
}

/** Appends one declaration (its body stored first). */
export async function appendDeclaration(tx: DbOrTx, row: DeclarationRow & { resources: unknown[] }): Promise<void> {
  await storeBodies(tx, [{ hash: row.hash, resources: row.resources }]);
  await tx
    .insert(declarations)
    .values({ nodeId: row.nodeId, version: row.version, hash: row.hash, roles: row.roles, roleVersions: row.roleVersions ?? {}, final: row.final ?? null });
}

/**
 * Appends many declarations in one statement (their bodies must be stored first: storeBodies). What
 * nodes share (hash, roles, role versions, final) is sent once per distinct combination; per node only
 * its id, its version and which combination: a fleet-wide compile of 10,000 nodes sends a few hundred
 * KB where a row each sent 1.6 MB of JSON for the database to parse (decision 0056).
 */
export async function appendDeclarations(tx: DbOrTx, rows: DeclarationRow[]): Promise<void> {
  if (rows.length === 0) return;
  const groups = new Map<string, number>();
  const shared: Array<{ grp: number; hash: string; roles: string[]; role_versions: Record<string, number>; final: string | null }> = [];
  const ids: string[] = [];
  const versions: number[] = [];
  const groupOf: number[] = [];
  // Rows of one compile share their roles and role-versions objects: each is written out once.
  const written = new Map<object, string>();
  const once = (value: object) => written.get(value) ?? (written.set(value, JSON.stringify(value)), written.get(value)!);
  for (const r of rows) {
    const roleVersions = r.roleVersions ?? {};
    const key = `${r.hash}\u0000${r.final ?? ""}\u0000${once(r.roles)}\u0000${once(roleVersions)}`;
    let index = groups.get(key);
    if (index === undefined) {
      groups.set(key, (index = shared.length));
      shared.push({ grp: index, hash: r.hash, roles: r.roles, role_versions: roleVersions, final: r.final ?? null });
    }
    ids.push(r.nodeId);
    versions.push(r.version);
    groupOf.push(index);
  }
  await tx.execute(sql`
    insert into ${declarations} (node_id, version, hash, roles, role_versions, final)
    select v.node_id, v.version, g.hash, g.roles, g.role_versions, g.final
    from unnest(${pgArray(ids)}::uuid[], ${pgArray(versions)}::int[], ${pgArray(groupOf)}::int[]) as v(node_id, version, grp)
    join jsonb_to_recordset(${JSON.stringify(shared)}::jsonb) as g(grp int, hash text, roles jsonb, role_versions jsonb, final text) using (grp)`);
}

/** A Postgres array literal of uuids or numbers (no quoting needed): one parameter whatever its length. */
const pgArray = (values: Array<string | number>) => `{${values.join(",")}}`;

/** Deletes, for many nodes at once, the versions past the retention rule (each node's own new version). */
export async function pruneHistory(tx: DbOrTx, rows: Array<{ nodeId: string; version: number }>): Promise<void> {
  // A node at version N <= the rule's count has nothing past it yet: no need to look.
  const due = rows.filter((r) => r.version > DECLARATION_HISTORY_PER_NODE);
  if (due.length === 0) return;
  const json = JSON.stringify(due.map((r) => ({ node_id: r.nodeId, version: r.version })));
  await tx.execute(sql`
    delete from ${declarations} d using jsonb_to_recordset(${json}::jsonb) as v(node_id uuid, version int)
    where d.node_id = v.node_id and d.version <= v.version - ${DECLARATION_HISTORY_PER_NODE}`);
}

/** Deletes one node's versions past the retention rule. */
export async function pruneNodeHistory(tx: DbOrTx, nodeId: string, version: number): Promise<void> {
  await tx.delete(declarations).where(and(eq(declarations.nodeId, nodeId), lte(declarations.version, version - DECLARATION_HISTORY_PER_NODE)));
}

/** Deletes bodies no declaration names any more, in one statement. */
export async function pruneBodies(tx: DbOrTx): Promise<number> {
  const gone = await tx
    .delete(declarationBodies)
    .where(sql`not exists (select 1 from ${declarations} d where d.hash = ${declarationBodies.hash})`)
    .returning({ hash: declarationBodies.hash });
  return gone.length;
}

/** The node's current declaration with its resources, or null before its first one. */
export async function currentDeclaration(db: DbOrTx, nodeId: string) {
  const [row] = await db
    .select({
      version: declarations.version,
      hash: declarations.hash,
      resources: declarationBodies.resources,
      roles: declarations.roles,
      final: declarations.final,
      createdAt: declarations.createdAt,
    })
    .from(declarations)
    .innerJoin(nodes, and(eq(nodes.id, declarations.nodeId), eq(nodes.declaredVersion, declarations.version)))
    .innerJoin(declarationBodies, eq(declarationBodies.hash, declarations.hash))
    .where(eq(declarations.nodeId, nodeId))
    .orderBy(desc(declarations.version))
    .limit(1);
  return row ?? null;
}

/** The current declaration (without its body) of each of these nodes, in one query. */
export async function currentDeclarations(db: DbOrTx, nodeIds: string[]): Promise<DeclarationRow[]> {
  if (nodeIds.length === 0) return [];
  // One parameter whatever the number of nodes.
  const ids = sql`(select jsonb_array_elements_text(${JSON.stringify(nodeIds)}::jsonb)::uuid)`;
  const rows = await db
    .select({ nodeId: declarations.nodeId, version: declarations.version, hash: declarations.hash, roles: declarations.roles, final: declarations.final })
    .from(declarations)
    .innerJoin(nodes, and(eq(nodes.id, declarations.nodeId), eq(nodes.declaredVersion, declarations.version)))
    .where(sql`${nodes.id} in ${ids}`);
  return rows;
}

/** Versions (with their bodies) of one node, for node-declares-file. */
export async function nodeDeclarationVersions(db: DbOrTx, nodeId: string, versions: number[]) {
  return db
    .select({ version: declarations.version, resources: declarationBodies.resources, createdAt: declarations.createdAt })
    .from(declarations)
    .innerJoin(declarationBodies, eq(declarationBodies.hash, declarations.hash))
    .where(and(eq(declarations.nodeId, nodeId), inArray(declarations.version, versions)));
}

/**
 * A node's versions, newest first, without their bodies: the per-node detail of fleet compiles
 * (which record one audit event for the whole change), shown in the node's timeline.
 */
export async function nodeDeclarationHistory(db: DbOrTx, nodeId: string, limit = 20) {
  return db
    .select({ version: declarations.version, hash: declarations.hash, roles: declarations.roles, final: declarations.final, createdAt: declarations.createdAt })
    .from(declarations)
    .where(eq(declarations.nodeId, nodeId))
    .orderBy(desc(declarations.version))
    .limit(limit);
}
