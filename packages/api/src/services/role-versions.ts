// A role's history (issue 14): the list of its versions (newest first, a page at a time: a role
// may have thousands), one version whole, the diff between any two, and roll back: the old
// version's content saved as a new version through role.upsert's own path (conflict check,
// compile), so a rollback is an ordinary save that the audit and the next diff see as one.
import { z } from "zod";
import { and, desc, eq, lt, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { nodes, roles, roleVersions } from "@mesh/db";
import { GrantDeclaration, Resource, RoleName, RoleVersionMessage, Selector, type Role, type RolloutPolicyInput } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { redactResources } from "./redact-content";
import { roleDiff } from "./role-diff";
import { upsertRole, type RoleSource } from "./roles";

const VersionNumber = z.number().int().min(1).max(2_147_483_647);

export const ListRoleVersionsInput = z.strictObject({
  name: RoleName,
  limit: z.number().int().min(1).max(200).default(50),
  /** Versions older than this one (the last version of the previous page). */
  cursor: VersionNumber.optional(),
  /** Sent by tRPC's infinite queries (the dashboard's list); pages only go back in time, so it is ignored. */
  direction: z.enum(["forward", "backward"]).optional(),
});
export type ListRoleVersionsInput = z.input<typeof ListRoleVersionsInput>;

export const RoleVersionSummary = z.object({
  version: VersionNumber,
  /** Who saved it, as the audit trail names them (`user:ada`, `key:ci`). */
  actor: z.string(),
  /** The same, for people: the user's or key's name, or a host's node name. */
  actorName: z.string(),
  message: z.string().nullable(),
  createdAt: z.date(),
  resources: z.number().int().min(0),
  /** The version the role holds now (none when the role is deleted). */
  current: z.boolean(),
});
export const RoleVersionPage = z.object({
  /** Whether the role exists now (a deleted role keeps its versions). */
  exists: z.boolean(),
  /** The role's newest version, null when it is deleted. */
  currentVersion: VersionNumber.nullable(),
  items: z.array(RoleVersionSummary),
  nextCursor: VersionNumber.nullable(),
});

export const RoleVersionInput = z.strictObject({ name: RoleName, version: VersionNumber });

export const RoleVersionDetail = RoleVersionSummary.extend({
  name: RoleName,
  selector: Selector,
  // Stored rows were parsed by Role at save time; a viewer's copy has inline content redacted.
  resources: z.array(Resource),
  resourceCount: z.number().int().min(0),
  grants: z.array(GrantDeclaration),
  /** As its author wrote it (admins only; null when not kept). */
  source: z.object({ selector: z.unknown(), resources: z.unknown() }).nullable().optional(),
});

export const RoleDiffInput = z.strictObject({ name: RoleName, from: VersionNumber, to: VersionNumber });

const PlannedChangeOut = z.object({
  id: z.string(),
  type: z.string(),
  subject: z.string(),
  action: z.enum(["create", "update", "remove"]),
  diff: z.string().optional(),
});
export const RoleDiffOutput = z.object({
  selector: z.object({ before: Selector.nullable(), after: Selector.nullable() }).optional(),
  grants: z.object({ before: z.array(GrantDeclaration), after: z.array(GrantDeclaration) }).optional(),
  /** Minutes (null: never revoked). */
  revokeOfflineAfter: z.object({ before: z.number().int().nullable(), after: z.number().int().nullable() }).optional(),
  resources: z.array(PlannedChangeOut),
  diffs: z.record(z.string(), z.object({ lines: z.array(z.string()), omitted: z.number().int() })),
});

export const RollbackRoleInput = z.strictObject({
  name: RoleName,
  version: VersionNumber,
  message: RoleVersionMessage.optional(),
  confirmConflicts: z.boolean().optional(),
});

export const RollbackRoleOutput = z.object({
  name: RoleName,
  rolledBackTo: VersionNumber,
  /** The new version the rollback saved. */
  version: VersionNumber,
  changed: z.number().int(),
  /** The staged rollout the save started, if the role's policy (or this call's) is staged. */
  rollout: z.string().nullable(),
  conflicts: z.array(z.object({ nodeId: z.string(), conflicts: z.array(z.object({ key: z.string(), roles: z.tuple([z.string(), z.string()]) })) })),
});

const actorNode = alias(nodes, "actor_node");

/** A person's name for an actor: the user's or key's name, a host's node name, else as stored. */
export function actorDisplayName(actor: string, nodeName: string | null): string {
  if (nodeName) return `${nodeName} (host)`;
  const [kind, ...rest] = actor.split(":");
  const name = rest.join(":");
  if (kind === "user" && name) return name;
  if (kind === "key" && name) return `${name} (API key)`;
  return actor;
}

/** The role's newest version now, or null when it does not exist (deleted, or never made). */
async function currentVersionOf(deps: Pick<Deps, "db">, name: string): Promise<number | null> {
  const [row] = await deps.db.select({ version: roles.version }).from(roles).where(eq(roles.name, name));
  return row?.version ?? null;
}

// The columns a list row reads: the resource count comes from SQL, never the resources themselves.
const summaryColumns = {
  version: roleVersions.version,
  actor: roleVersions.actor,
  actorNodeName: actorNode.name,
  message: roleVersions.message,
  createdAt: roleVersions.createdAt,
  resourceCount: sql<number>`jsonb_array_length(${roleVersions.resources})`.mapWith(Number),
};
const actorJoin = sql`${actorNode.id} = case when ${roleVersions.actor} ~ '^node:[0-9a-f-]{36}$' then substr(${roleVersions.actor}, 6)::uuid end`;

function summary(
  r: { version: number; actor: string; actorNodeName: string | null; message: string | null; createdAt: Date; resourceCount: number },
  current: number | null,
) {
  return {
    version: r.version,
    actor: r.actor,
    actorName: actorDisplayName(r.actor, r.actorNodeName),
    message: r.message,
    createdAt: r.createdAt,
    resources: r.resourceCount,
    current: r.version === current,
  };
}

/** role.versions: newest first, keyset-paged on the version number (deep pages stay cheap). */
export async function listRoleVersions(deps: Pick<Deps, "db">, raw: ListRoleVersionsInput) {
  const input = ListRoleVersionsInput.parse(raw);
  const current = await currentVersionOf(deps, input.name);
  const where = [eq(roleVersions.roleName, input.name), ...(input.cursor ? [lt(roleVersions.version, input.cursor)] : [])];
  const rows = await deps.db
    .select(summaryColumns)
    .from(roleVersions)
    .leftJoin(actorNode, actorJoin)
    .where(and(...where))
    .orderBy(desc(roleVersions.version))
    .limit(input.limit + 1);
  if (rows.length === 0 && current === null && !input.cursor) throw new MeshError("NOT_FOUND", `no role named ${input.name}`);
  const items = rows.slice(0, input.limit).map((r) => summary(r, current));
  return { exists: current !== null, currentVersion: current, items, nextCursor: rows.length > input.limit ? items[items.length - 1]!.version : null };
}

/** One version's full row, or NOT_FOUND naming it. */
async function loadVersion(deps: Pick<Deps, "db">, name: string, version: number) {
  const [row] = await deps.db
    .select({
      ...summaryColumns,
      selector: roleVersions.selector,
      resources: roleVersions.resources,
      grants: roleVersions.grants,
      source: roleVersions.source,
      revokeOfflineMinutes: roleVersions.revokeOfflineMinutes,
    })
    .from(roleVersions)
    .leftJoin(actorNode, actorJoin)
    .where(and(eq(roleVersions.roleName, name), eq(roleVersions.version, version)));
  if (!row) throw new MeshError("NOT_FOUND", `role ${name} has no version ${version}`);
  return row;
}

const asRole = (name: string, row: { selector: unknown; resources: unknown; grants: unknown; revokeOfflineMinutes?: number | null }): Role => ({
  name,
  selector: row.selector as Role["selector"],
  resources: row.resources as Role["resources"],
  grants: (row.grants as Role["grants"]) ?? [],
  // A version is the whole role, its revoke-offline policy too: a rollback brings that back as well.
  ...(row.revokeOfflineMinutes != null ? { revokeOfflineAfter: row.revokeOfflineMinutes } : {}),
});

/** role.version: the version whole; inline content redacted unless the caller may see it, as role.list does. */
export async function getRoleVersion(deps: Pick<Deps, "db">, opts: { name: string; version: number; showContent: boolean }) {
  const row = await loadVersion(deps, opts.name, opts.version);
  const current = await currentVersionOf(deps, opts.name);
  const role = asRole(opts.name, row);
  return {
    ...summary(row, current),
    name: opts.name,
    selector: role.selector,
    resources: opts.showContent ? role.resources : redactResources(role.resources),
    resourceCount: row.resourceCount,
    grants: role.grants,
    ...(opts.showContent ? { source: (row.source as RoleSource | null) ?? null } : {}),
  };
}

/**
 * role.diff: what changed from version `from` to version `to` (either may be the older). A caller
 * who may not see inline content diffs the redacted versions: a changed secret shows as a changed
 * digest, never as its text.
 */
export async function diffRoleVersions(deps: Pick<Deps, "db">, opts: { name: string; from: number; to: number; showContent: boolean }) {
  const [from, to] = await Promise.all([loadVersion(deps, opts.name, opts.from), loadVersion(deps, opts.name, opts.to)]);
  const side = (row: typeof from) => {
    const role = asRole(opts.name, row);
    return opts.showContent ? role : { ...role, resources: redactResources(role.resources) };
  };
  return roleDiff(side(from), side(to));
}

/**
 * role.rollback: version `version`'s content (selector, resources, grants and the author's source)
 * saved as a new version by upsertRole, so it is conflict-checked, compiled and rolled out like any
 * save (the role's rollout policy, or `rollout` for this save). A deleted role is made again.
 */
export async function rollbackRole(
  deps: Deps,
  opts: { actor: string; name: string; version: number; message?: string | null; confirmConflicts?: boolean; rollout?: RolloutPolicyInput },
) {
  const old = await loadVersion(deps, opts.name, opts.version);
  const result = await upsertRole(deps, {
    actor: opts.actor,
    input: asRole(opts.name, old),
    confirmConflicts: opts.confirmConflicts,
    source: (old.source as RoleSource | null) ?? null,
    message: opts.message || `roll back to v${opts.version}`,
    rollout: opts.rollout,
  });
  return {
    name: opts.name,
    rolledBackTo: opts.version,
    version: result.version,
    changed: result.changed,
    conflicts: result.conflicts,
    rollout: result.rollout?.id ?? null,
  };
}
