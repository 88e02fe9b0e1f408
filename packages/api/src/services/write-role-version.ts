// Writing a new version of a role, the one way every path does it (role.upsert, role.rollback, a rollout's
// rollback): the next version number, the roles row, the immutable role_versions row (its revoke-offline
// policy too), and one role.upsert audit event carrying the bounded change record (role-change-record.ts).
// The caller holds the compiler lock (versions are numbered under it) and has run the conflict check.
import { eq, sql } from "drizzle-orm";
import { roles, roleVersions, type DbOrTx } from "@mesh/db";
import { Role, type RolloutPolicy } from "@mesh/protocol";
import { recordEvent } from "./record-event";
import { roleChangeRecord, type RoleSnapshot } from "./role-change-record";
import type { ConflictCheck } from "./check-conflicts";

/** A role_versions row as the role it is: the whole role, its revoke-offline policy too. */
export function roleOfVersionRow(row: {
  roleName: string;
  selector: unknown;
  resources: unknown;
  grants: unknown;
  revokeOfflineMinutes?: number | null;
}): Role {
  return Role.parse({
    name: row.roleName,
    selector: row.selector,
    resources: row.resources,
    grants: row.grants ?? [],
    ...(row.revokeOfflineMinutes != null ? { revokeOfflineAfter: row.revokeOfflineMinutes } : {}),
  });
}

/**
 * The number the next save of this role gets: one past the last version ever saved under its name
 * (a role deleted and made again goes on counting). The compiler lock held by the caller orders saves.
 */
export async function nextRoleVersion(tx: DbOrTx, name: string): Promise<number> {
  const [row] = await tx
    .select({ last: sql<number | null>`max(${roleVersions.version})` })
    .from(roleVersions)
    .where(eq(roleVersions.roleName, name));
  return (row?.last ?? 0) + 1;
}

export interface WriteRoleVersionInput {
  actor: string;
  role: Role;
  source: unknown;
  message: string | null;
  /** Store as the role's default rollout policy (null clears it, undefined keeps it). */
  rolloutPolicy?: RolloutPolicy | null;
  /** The conflict check the caller ran: new conflicts it confirmed are recorded in the event. */
  check: ConflictCheck;
  /** Extra fields for the role.upsert event (a rollout's rollback names it). */
  eventData?: Record<string, unknown>;
}

/** Writes the role's next version; returns its number and the roles row as it was before (undefined: new). */
export async function writeRoleVersion(tx: DbOrTx, input: WriteRoleVersionInput) {
  const { role, check } = input;
  const version = await nextRoleVersion(tx, role.name);
  const [old] = await tx.select().from(roles).where(eq(roles.name, role.name));
  const keepPolicy = input.rolloutPolicy === undefined ? {} : { rolloutPolicy: input.rolloutPolicy };
  const revokeOfflineMinutes = role.revokeOfflineAfter ?? null;
  const before: RoleSnapshot | null = old
    ? {
        selector: old.selector,
        resources: old.resources as RoleSnapshot["resources"],
        grants: (old.grants ?? []) as RoleSnapshot["grants"],
        revokeOfflineAfter: old.revokeOfflineMinutes ?? null,
      }
    : null;
  const diff = roleChangeRecord(before, { selector: role.selector, resources: role.resources, grants: role.grants, revokeOfflineAfter: revokeOfflineMinutes });
  const row = { selector: role.selector, resources: role.resources, grants: role.grants, source: input.source ?? null, revokeOfflineMinutes, version };
  await tx
    .insert(roles)
    .values({ name: role.name, ...row, ...keepPolicy })
    .onConflictDoUpdate({ target: roles.name, set: { ...row, updatedAt: sql`now()`, ...keepPolicy } });
  // Every save is a new immutable version (issue 14), committed with the role and its compile.
  await tx.insert(roleVersions).values({
    roleName: role.name,
    version,
    selector: role.selector,
    resources: role.resources,
    grants: role.grants,
    source: input.source ?? null,
    revokeOfflineMinutes,
    message: input.message,
    actor: input.actor,
  });
  await recordEvent(tx, {
    actor: input.actor,
    action: "role.upsert",
    data: {
      name: role.name,
      version,
      resources: role.resources.length,
      diff,
      ...(input.eventData ?? {}),
      ...(check.nodes > 0
        ? { confirmedConflicts: { nodes: check.nodes, conflicts: check.conflicts.map((c) => ({ key: c.key, roles: c.roles, nodes: c.nodes })) } }
        : {}),
    },
  });
  return { version, old };
}
