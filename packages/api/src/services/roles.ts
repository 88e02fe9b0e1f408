// role.list / role.upsert / role.delete. A change to a role recompiles the fleet
// in the same transaction, so the new declarations and the role commit together.
import { asc, eq, sql } from "drizzle-orm";
import { roles } from "@mesh/db";
import { Role, type RoleInput } from "@mesh/protocol";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { recordEvent } from "./record-event";
import { recompileFleet, type FleetCompileResult } from "./recompile-fleet";
import { grantSelectorViolation } from "../compile/grant-selector-rule";
import { redactResources } from "./redact-content";
import { lockCompiler } from "./recompile-node";
import { checkConflicts, refuseNewConflicts } from "./check-conflicts";
import { roleDiff, type RoleSnapshot } from "./role-diff";

/** A role's selector and resources as its author sent them (their key order, no defaults added), for the editor. */
export interface RoleSource {
  selector: unknown;
  resources: unknown;
}

/** The author's text of a role input that has passed the schema: what role.upsert keeps in `roles.source`. */
export function authorSource(raw: unknown): RoleSource | null {
  if (typeof raw !== "object" || raw === null || !("resources" in raw)) return null;
  const r = raw as { selector?: unknown; resources: unknown };
  return { selector: r.selector ?? {}, resources: r.resources };
}

/**
 * Every role; inline content is replaced by its sha256 and size unless the caller may see it
 * (admins), who also get `source`, the role as its author wrote it (null when not kept).
 */
export async function listRoles(deps: Pick<Deps, "db">, opts: { showContent: boolean } = { showContent: false }): Promise<Array<Role & { source?: RoleSource | null }>> {
  const rows = await deps.db.select().from(roles).orderBy(asc(roles.name));
  return rows.map(
    (r) =>
      ({
        name: r.name,
        selector: r.selector,
        resources: opts.showContent ? r.resources : redactResources(r.resources as unknown[]),
        grants: r.grants ?? [],
        revokeOfflineAfter: r.revokeOfflineMinutes ?? null,
        ...(opts.showContent ? { source: (r.source as RoleSource | null) ?? null } : {}),
      }) as Role & { source?: RoleSource | null },
  );
}

/** What the API returns: how many nodes got a new declaration, and every node in conflict. */
function summarise(result: FleetCompileResult) {
  return { changed: result.changed, conflicts: result.conflicts };
}

/**
 * Saves a role and recompiles the fleet. A role that would put nodes into a conflict they do
 * not have now is refused (CONFLICT, naming it) unless `confirmConflicts` (check-conflicts.ts).
 * The whole role is replaced: a field left out takes its default (no grants, no revoke policy).
 * The audit event carries what changed (role-diff.ts).
 */
export async function upsertRole(deps: Deps, opts: { actor: string; input: RoleInput; confirmConflicts?: boolean; source?: RoleSource | null }) {
  const role = Role.parse(opts.input);
  const violation = grantSelectorViolation(role);
  if (violation) throw new MeshError("BAD_INPUT", violation);
  const results = await deps.db.transaction(async (tx) => {
    // The compiler lock first: the check sees the roles and nodes the compile below will.
    await lockCompiler(tx);
    const check = await checkConflicts(tx, { role });
    refuseNewConflicts(check, opts.confirmConflicts);
    const [old] = await tx.select().from(roles).where(eq(roles.name, role.name));
    const revokeOfflineMinutes = role.revokeOfflineAfter ?? null;
    const before: RoleSnapshot | null = old
      ? { selector: old.selector, resources: old.resources as RoleSnapshot["resources"], grants: (old.grants ?? []) as RoleSnapshot["grants"], revokeOfflineAfter: old.revokeOfflineMinutes ?? null }
      : null;
    const diff = roleDiff(before, { selector: role.selector, resources: role.resources, grants: role.grants, revokeOfflineAfter: revokeOfflineMinutes });
    const row = { selector: role.selector, resources: role.resources, grants: role.grants, source: opts.source ?? null, revokeOfflineMinutes };
    await tx
      .insert(roles)
      .values({ name: role.name, ...row })
      .onConflictDoUpdate({ target: roles.name, set: { ...row, updatedAt: sql`now()` } });
    await recordEvent(tx, { actor: opts.actor, action: "role.upsert", data: { name: role.name, resources: role.resources.length, diff, ...(check.nodes > 0 ? { confirmedConflicts: { nodes: check.nodes, conflicts: check.conflicts.map((c) => ({ key: c.key, roles: c.roles, nodes: c.nodes })) } } : {}) } });
    return recompileFleet(tx, { actor: opts.actor, grants: deps.grants });
  });
  return { role, ...summarise(results) };
}

export async function deleteRole(deps: Deps, opts: { actor: string; name: string }) {
  const results = await deps.db.transaction(async (tx) => {
    const deleted = await tx.delete(roles).where(eq(roles.name, opts.name)).returning({ name: roles.name });
    if (deleted.length === 0) throw new MeshError("NOT_FOUND", `no role named ${opts.name}`);
    await recordEvent(tx, { actor: opts.actor, action: "role.delete", data: { name: opts.name } });
    return recompileFleet(tx, { actor: opts.actor, grants: deps.grants });
  });
  return summarise(results);
}
