// role.list / role.upsert / role.delete. A change to a role recompiles the fleet
// in the same transaction, so the new declarations and the role commit together.
import { asc, eq } from "drizzle-orm";
import { roles } from "@mesh/db";
import { Role, RolloutPolicy, type RoleInput, type RolloutPolicyInput } from "@mesh/protocol";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { dropPins, markReleased, startRollout, supersedeRollouts, type StartedRollout } from "../rollouts/start-rollout";
import { recordEvent } from "./record-event";
import { CompileCache, loadFleet, pushCommitted, recompileFleet, withRole, type FleetCompileResult } from "./recompile-fleet";
import { grantSelectorViolation } from "../compile/grant-selector-rule";
import { redactResources } from "./redact-content";
import { lockCompiler } from "./recompile-node";
import { checkRoleOnFleet, refuseNewConflicts } from "./check-conflicts";
import { nextRoleVersion, writeRoleVersion } from "./write-role-version";

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
export async function listRoles(
  deps: Pick<Deps, "db">,
  opts: { showContent: boolean } = { showContent: false },
): Promise<Array<Role & { version: number; source?: RoleSource | null; rolloutPolicy: RolloutPolicy | null }>> {
  const rows = await deps.db.select().from(roles).orderBy(asc(roles.name));
  return rows.map(
    (r) =>
      ({
        name: r.name,
        selector: r.selector,
        resources: opts.showContent ? r.resources : redactResources(r.resources as unknown[]),
        grants: r.grants ?? [],
        version: r.version,
        revokeOfflineAfter: r.revokeOfflineMinutes ?? null,
        // The role's default rollout policy (null: a save without one goes all at once).
        rolloutPolicy: (r.rolloutPolicy as RolloutPolicy | null) ?? null,
        ...(opts.showContent ? { source: (r.source as RoleSource | null) ?? null } : {}),
      }) as Role & { version: number; source?: RoleSource | null; rolloutPolicy: RolloutPolicy | null },
  );
}

/** What the API returns: how many nodes got a new declaration, and every node in conflict. */
function summarise(result: FleetCompileResult) {
  return { changed: result.changed, conflicts: result.conflicts };
}

export interface UpsertRoleOptions {
  actor: string;
  input: RoleInput;
  confirmConflicts?: boolean;
  source?: RoleSource | null;
  message?: string | null;
  /** This save's rollout, overriding the role's default policy. */
  rollout?: RolloutPolicyInput;
  /** Store as the role's default policy (null clears it, undefined keeps it); this save uses it unless `rollout` is given. */
  rolloutPolicy?: RolloutPolicyInput | null;
}

/**
 * Saves a role and recompiles the fleet. A role that would put nodes into a conflict they do
 * not have now is refused (CONFLICT, naming it) unless `confirmConflicts` (check-conflicts.ts).
 * With a staged policy (`rollout`, else the role's default) the change reaches the canary now and
 * the rest wave by wave (rollouts/); without one, every node at once (the behaviour before issue 14).
 * Either way a rollout of the role still running is superseded.
 * The whole role is replaced: a field left out takes its default (no grants, no revoke policy).
 * The audit event carries what changed (role-diff.ts).
 */
export async function upsertRole(deps: Deps, opts: UpsertRoleOptions) {
  const role = Role.parse(opts.input);
  const violation = grantSelectorViolation(role);
  if (violation) throw new MeshError("BAD_INPUT", violation);
  const storePolicy = opts.rolloutPolicy === undefined ? undefined : opts.rolloutPolicy === null ? null : RolloutPolicy.parse(opts.rolloutPolicy);
  const override = opts.rollout === undefined ? undefined : RolloutPolicy.parse(opts.rollout);
  const now = nowOf(deps);
  const results = await deps.db.transaction(async (tx) => {
    // The compiler lock first: the check sees the roles and nodes the compile below will. Both use ONE
    // read of the roles and the fleet (its rows locked in id order: the order the presence and report
    // batches take them in, and before startRollout's pins and rollout nodes, whose foreign keys lock
    // the nodes they name in no order), and one compile per distinct set of matched role versions; a
    // refusal comes before any write.
    await lockCompiler(tx);
    const fleet = await loadFleet(tx, { selectors: [role.selector] });
    const compiles = new CompileCache();
    // The version this save gets (numbered under the compiler lock, as writeRoleVersion numbers it).
    const proposed = { ...role, version: await nextRoleVersion(tx, role.name) };
    const check = await checkRoleOnFleet(tx, fleet, proposed, compiles);
    refuseNewConflicts(check, opts.confirmConflicts);
    const { version, old } = await writeRoleVersion(tx, {
      actor: opts.actor,
      role,
      source: opts.source ?? null,
      message: opts.message ?? null,
      rolloutPolicy: storePolicy,
      check,
    });
    const policy = override ?? (storePolicy !== undefined ? storePolicy : old?.rolloutPolicy ? RolloutPolicy.parse(old.rolloutPolicy) : null);
    let rollout: StartedRollout | null = null;
    if (policy?.mode === "staged") {
      rollout = await startRollout(tx, { roleName: role.name, fromVersion: old?.version ?? 0, toVersion: version, role, policy, actor: opts.actor, now });
    } else {
      await supersedeRollouts(tx, role.name, null, now);
      await dropPins(tx, role.name);
    }
    const saved = version === proposed.version ? proposed : { ...role, version };
    const compiled = await recompileFleet(
      tx,
      { actor: opts.actor, grants: deps.grants },
      { fleet: { ...fleet, roles: withRole(fleet.roles, saved) }, compiles },
    );
    if (rollout) await markReleased(tx, rollout.id, 0);
    return { compiled, rollout, version };
  });
  // Committed: this process's gateway sends the frames now, before the notification comes back.
  pushCommitted(deps, results.compiled);
  return { role, version: results.version, ...summarise(results.compiled), rollout: results.rollout };
}

export { nextRoleVersion };

export async function deleteRole(deps: Deps, opts: { actor: string; name: string }) {
  const results = await deps.db.transaction(async (tx) => {
    // The compiler lock before the role's row and its rollouts: a wave release holds the lock and then
    // waits on the rollout row (advance.ts), so taking them the other way round would deadlock.
    await lockCompiler(tx);
    const deleted = await tx.delete(roles).where(eq(roles.name, opts.name)).returning({ name: roles.name });
    if (deleted.length === 0) throw new MeshError("NOT_FOUND", `no role named ${opts.name}`);
    await recordEvent(tx, { actor: opts.actor, action: "role.delete", data: { name: opts.name } });
    // A deleted role's rollouts end and its pins go: no node compiles any version of it any more.
    await supersedeRollouts(tx, opts.name, null, nowOf(deps));
    await dropPins(tx, opts.name);
    return recompileFleet(tx, { actor: opts.actor, grants: deps.grants });
  });
  pushCommitted(deps, results);
  return summarise(results);
}
