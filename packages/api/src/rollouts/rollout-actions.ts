// What an admin does to a rollout (rollout.* procedures): read them, pause / resume, continue past a halt,
// roll back. Each act is one transaction and one audit event, whatever the number of nodes.
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { events, roles, roleVersions, rolePins, rollouts, rolloutNodes, rowsOf } from "@mesh/db";
import { StagedRolloutPolicy } from "@mesh/protocol";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { recordEvent } from "../services/record-event";
import { lockFleetRows, recompileFleet } from "../services/recompile-fleet";
import { lockCompiler } from "../services/recompile-node";
import { checkConflicts, refuseNewConflicts } from "../services/check-conflicts";
import { roleOfVersionRow, writeRoleVersion } from "../services/write-role-version";
import { waveCounts } from "./advance";
import { markReleased, startRollout } from "./start-rollout";

/** Rollouts listed at most (newest first). */
export const ROLLOUTS_LISTED = 100;

const summaryColumns = {
  id: rollouts.id,
  roleName: rollouts.roleName,
  fromVersion: rollouts.fromVersion,
  toVersion: rollouts.toVersion,
  state: rollouts.state,
  waves: rollouts.waves,
  currentWave: rollouts.currentWave,
  haltReason: rollouts.haltReason,
  rollbackOf: rollouts.rollbackOf,
  supersededBy: rollouts.supersededBy,
  actor: rollouts.actor,
  createdAt: rollouts.createdAt,
  finishedAt: rollouts.finishedAt,
};

export async function listRollouts(deps: Pick<Deps, "db">, input: { role?: string }) {
  const items = await deps.db
    .select(summaryColumns)
    .from(rollouts)
    .where(input.role ? eq(rollouts.roleName, input.role) : undefined)
    .orderBy(desc(rollouts.createdAt), desc(rollouts.id))
    .limit(ROLLOUTS_LISTED);
  return { items };
}

export async function getRollout(deps: Pick<Deps, "db">, input: { id: string }) {
  const [r] = await deps.db
    .select({ ...summaryColumns, policy: rollouts.policy, plan: rollouts.plan, waveStartedAt: rollouts.waveStartedAt, waveDoneAt: rollouts.waveDoneAt })
    .from(rollouts)
    .where(eq(rollouts.id, input.id));
  if (!r) throw new MeshError("NOT_FOUND", `no rollout ${input.id}`);
  const waves = await waveCounts(deps.db, input.id);
  // Who did what: the rollout's own audit events (start, waves, halt, admin acts, complete), oldest first.
  const history = await deps.db
    .select({ at: events.at, actor: events.actor, action: events.action, result: events.result, data: events.data })
    .from(events)
    .where(and(eq(events.target, input.id), sql`${events.action} like 'rollout.%'`))
    .orderBy(events.id)
    .limit(500);
  return { ...r, policy: StagedRolloutPolicy.parse(r.policy), waves: r.waves, waveCounts: waves, history };
}

type Act = "pause" | "resume" | "continue";
const FROM: Record<Act, string> = { pause: "running", resume: "paused", continue: "halted" };

/**
 * pause: a running rollout releases nothing more (its released nodes keep the new version); resume: it goes on
 * where it was (the wave's timeout still counts from the wave's start); continue: a halted rollout goes past
 * its halt, to the next wave at the next tick (no soak again).
 */
export async function actOnRollout(deps: Pick<Deps, "db" | "now">, opts: { actor: string; id: string; act: Act }) {
  const now = nowOf(deps);
  return deps.db.transaction(async (tx) => {
    const [r] = await tx.select().from(rollouts).where(eq(rollouts.id, opts.id)).for("update");
    if (!r) throw new MeshError("NOT_FOUND", `no rollout ${opts.id}`);
    if (r.state !== FROM[opts.act])
      throw new MeshError(
        "CONFLICT",
        `the rollout is ${r.state}: only a ${FROM[opts.act]} one can be ${opts.act === "pause" ? "paused" : opts.act === "resume" ? "resumed" : "continued"}`,
      );
    const policy = StagedRolloutPolicy.parse(r.policy);
    const set =
      opts.act === "pause"
        ? { state: "paused" as const }
        : opts.act === "resume"
          ? { state: "running" as const }
          : // The halted wave stays done; its soak counts as served.
            { state: "running" as const, haltReason: null, waveDoneAt: new Date(now.getTime() - policy.soakSeconds * 1000) };
    await tx
      .update(rollouts)
      .set({ ...set, updatedAt: now })
      .where(eq(rollouts.id, opts.id));
    await recordEvent(tx, {
      actor: opts.actor,
      action: `rollout.${opts.act}`,
      target: opts.id,
      data: { id: opts.id, role: r.roleName, wave: r.currentWave, ...(opts.act === "continue" ? { haltReason: r.haltReason } : {}) },
    });
    return { id: opts.id, state: set.state };
  });
}

/**
 * Rolls a rollout back: a new version of the role with the from-version's content, rolled out to the nodes
 * the rollout released, in the same waves (its canary released now); the nodes never released lose their
 * pins (they compile the new version, whose content is what they have: no change). The rollout becomes
 * rolled-back. Refused when the role has been saved since (roll back the newer rollout) or was new.
 */
export async function rollbackRollout(deps: Deps, opts: { actor: string; id: string; message?: string | null; confirmConflicts?: boolean }) {
  const now = nowOf(deps);
  return deps.db.transaction(async (tx) => {
    await lockCompiler(tx);
    // The fleet's rows in id order before the new rollout's pins and nodes lock them (foreign keys, no order).
    await lockFleetRows(tx);
    const [r] = await tx.select().from(rollouts).where(eq(rollouts.id, opts.id)).for("update");
    if (!r) throw new MeshError("NOT_FOUND", `no rollout ${opts.id}`);
    if (!["running", "paused", "halted", "completed"].includes(r.state)) throw new MeshError("CONFLICT", `the rollout is ${r.state}: nothing to roll back`);
    const [current] = await tx.select({ version: roles.version }).from(roles).where(eq(roles.name, r.roleName));
    if (!current || current.version !== r.toVersion)
      throw new MeshError("CONFLICT", `role ${r.roleName} has been saved or deleted since this rollout: roll back its newest rollout instead`);
    if (r.fromVersion === 0) throw new MeshError("BAD_INPUT", `role ${r.roleName} was new in this rollout: delete it instead`);
    // A rollout that superseded another reached nodes at other versions (the older rollout's unreleased nodes
    // kept theirs): going "back" to fromVersion would move them to a version they never had. Refused, naming it.
    const [mixed] = rowsOf<{ nodes: number; versions: number[] }>(
      await tx.execute(sql`
        select count(*)::int as nodes, array_agg(distinct from_version order by from_version) as versions
        from ${rolloutNodes} where rollout_id = ${r.id}::uuid and from_version <> ${r.fromVersion}
        having count(*) > 0`),
    );
    if (mixed)
      throw new MeshError(
        "CONFLICT",
        `${mixed.nodes} node(s) of this rollout had version ${mixed.versions.join(", ")} of role ${r.roleName}, not ${r.fromVersion} (it superseded an unfinished rollout): a rollback to ${r.fromVersion} would give them a version they never had; roll back with role.rollback to the version you want instead`,
      );
    const [from] = await tx
      .select()
      .from(roleVersions)
      .where(and(eq(roleVersions.roleName, r.roleName), eq(roleVersions.version, r.fromVersion)));
    if (!from) throw new MeshError("NOT_FOUND", `role ${r.roleName} version ${r.fromVersion} is gone`);
    // The whole from-version, its revoke-offline policy too; checked for conflicts like any save.
    const role = roleOfVersionRow(from);
    const check = await checkConflicts(tx, { role });
    refuseNewConflicts(check, opts.confirmConflicts);
    const { version } = await writeRoleVersion(tx, {
      actor: opts.actor,
      role,
      source: from.source,
      message: opts.message ?? `rollback of rollout ${r.id} (to version ${r.fromVersion})`,
      check,
      eventData: { rollbackOf: r.id },
    });
    await tx.update(rollouts).set({ state: "rolled-back", finishedAt: now, updatedAt: now }).where(eq(rollouts.id, opts.id));
    // Never released: back to no pin (the new version has the content they kept).
    const released = await tx
      .select({ nodeId: rolloutNodes.nodeId, wave: rolloutNodes.wave })
      .from(rolloutNodes)
      .where(and(eq(rolloutNodes.rolloutId, opts.id), sql`${rolloutNodes.releasedAt} is not null`));
    await tx.delete(rolePins).where(and(eq(rolePins.roleName, r.roleName), inArray(rolePins.rolloutId, [opts.id])));
    const started = await startRollout(tx, {
      roleName: r.roleName,
      fromVersion: r.toVersion,
      toVersion: version,
      role,
      policy: StagedRolloutPolicy.parse(r.policy),
      actor: opts.actor,
      now,
      fixedWaves: new Map(released.map((n) => [n.nodeId, n.wave])),
      rollbackOf: r.id,
    });
    await recompileFleet(tx, { actor: opts.actor, grants: deps.grants });
    await markReleased(tx, started.id, 0);
    return { rolledBack: opts.id, rollout: started, version };
  });
}
