// Role pins (issue 14): a node with a pin for role R compiles R at the pinned version (its role_versions
// row), without one at R's newest. A staged rollout pins the nodes a change reaches and releases them
// wave by wave (rollouts/). Pin version 0 leaves the role out: the node was not to have it yet (a new role).
// Every read here is one query for any number of nodes: the fleet compile stays set-based.
import { and, inArray, sql } from "drizzle-orm";
import { rolePins, roleVersions, type DbOrTx } from "@mesh/db";
import { roleOfVersionRow } from "./write-role-version";
import type { VersionedRole } from "./recompile-node";

/** node id -> (role name -> pinned version). */
export type NodePins = Map<string, Map<string, number>>;

/** The pins of these nodes (every node's when ids is omitted), in one query. */
export async function loadPins(db: DbOrTx, ids?: string[]): Promise<NodePins> {
  const rows = await db
    .select({ nodeId: rolePins.nodeId, roleName: rolePins.roleName, version: rolePins.version })
    .from(rolePins)
    .where(ids === undefined ? undefined : sql`${rolePins.nodeId} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`);
  const pins: NodePins = new Map();
  for (const r of rows) {
    let of = pins.get(r.nodeId);
    if (!of) pins.set(r.nodeId, (of = new Map()));
    of.set(r.roleName, r.version);
  }
  return pins;
}

const pinKey = (name: string, version: number) => `${name}@${version}`;

/** The role versions the pins name ("name@version" -> role), in one query. */
export async function loadPinnedRoles(db: DbOrTx, pins: NodePins): Promise<Map<string, VersionedRole>> {
  const wanted = new Map<string, { name: string; version: number }>();
  for (const of of pins.values()) for (const [name, version] of of) if (version > 0) wanted.set(pinKey(name, version), { name, version });
  if (wanted.size === 0) return new Map();
  const names = [...new Set([...wanted.values()].map((w) => w.name))];
  const versions = [...new Set([...wanted.values()].map((w) => w.version))];
  const rows = await db
    .select()
    .from(roleVersions)
    .where(and(inArray(roleVersions.roleName, names), inArray(roleVersions.version, versions)));
  const out = new Map<string, VersionedRole>();
  for (const r of rows) {
    const key = pinKey(r.roleName, r.version);
    if (!wanted.has(key)) continue;
    out.set(key, { ...roleOfVersionRow(r), version: r.version });
  }
  return out;
}

export interface EffectiveRoles {
  roles: VersionedRole[];
  /** Stands for the pins in a compile group's key ("" without pins). */
  pinSignature: string;
}

/** The roles node `nodeId` compiles now: `newest` with the versions a staged rollout pins it to (one query without pins). */
export async function nodeRoles(db: DbOrTx, nodeId: string, newest: VersionedRole[]): Promise<VersionedRole[]> {
  const pins = await loadPins(db, [nodeId]);
  return pins.size === 0 ? newest : effectiveRoles(newest, pins.get(nodeId), await loadPinnedRoles(db, pins)).roles;
}

/**
 * The roles one node compiles: the newest, each pinned one replaced by its pinned version (or left out
 * at version 0). A pin naming a role that no longer exists is ignored (deleting a role drops its pins).
 */
export function effectiveRoles(newest: VersionedRole[], pins: Map<string, number> | undefined, pinned: Map<string, VersionedRole>): EffectiveRoles {
  if (!pins || pins.size === 0) return { roles: newest, pinSignature: "" };
  const roles: VersionedRole[] = [];
  let pinSignature = "";
  for (const role of newest) {
    const version = pins.get(role.name);
    if (version === undefined || version === role.version) {
      roles.push(role);
      continue;
    }
    pinSignature += `|${pinKey(role.name, version)}`;
    if (version === 0) continue;
    const old = pinned.get(pinKey(role.name, version));
    // A pinned version that cannot be read (never the case: versions are immutable) compiles the newest.
    roles.push(old ?? role);
  }
  return { roles, pinSignature };
}

/** { role: version } of the roles that made a declaration (declarations.role_versions). */
export function roleVersionsOf(compiledRoles: string[], roles: VersionedRole[]): Record<string, number> {
  const byName = new Map(roles.map((r) => [r.name, r.version]));
  const out: Record<string, number> = {};
  for (const name of compiledRoles) {
    const v = byName.get(name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/**
 * A node that leaves the compilable states (revoked, retiring) compiles nothing any more: its pins go, so
 * they neither linger as "pinned" nor keep a role version referenced. One statement.
 */
export async function dropNodePins(db: DbOrTx, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.delete(rolePins).where(sql`${rolePins.nodeId} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`);
}
