// One step of one rollout, set-based (a few statements whatever the wave's size). Called by the worker
// (rollout-worker.ts) for each running rollout on every tick:
// 1. outcomes: the current wave's released nodes that have none yet get one from their latest report
//    (reported version >= the version released to them: applied without errors, and for a host upgrade
//    once the node runs the declared release; failed with errors or a refused declaration) or `timed-out`
//    once waveTimeoutSeconds passed since the wave started;
// 2. the wave is done when every node has an outcome: the canary with any failed or timed-out node, or a
//    later wave whose failed share passes haltAtFailurePercent, halts the rollout (rollout.halt, alerted as
//    "rollout-halted"); otherwise the wave's result is recorded (rollout.wave) and the soak starts;
// 3. after the soak the next wave is released (releaseWave), or the rollout is completed.
// Every write re-reads the rollout row under FOR UPDATE and checks its state and wave first, so a step run
// twice (two workers, a retry) does nothing the second time: a wave is released at most once.
import { ACTOR } from "../auth/actor";
import { and, eq, inArray, isNotNull, or, sql } from "drizzle-orm";
import { declarationBodies, declarations, nodes, rolePins, rollouts, rolloutNodes, type DbOrTx, rowsOf } from "@mesh/db";
import { StagedRolloutPolicy, hostRunsPackageVersion } from "@mesh/protocol";
import { nowOf, type Deps } from "../deps";
import { recordEvent } from "../services/record-event";
import { recompileFleet } from "../services/recompile-fleet";
import { COMPILABLE_STATES, lockCompiler } from "../services/recompile-node";
import { markReleased } from "./start-rollout";

/** Failed node ids named in a halt event (and its alert); the counts say how many in all. */
export const HALT_IDS_IN_EVENT = 100;

export interface WaveCounts {
  wave: number;
  nodes: number;
  applied: number;
  failed: number;
  timedOut: number;
  pending: number;
}

/** Per wave: how many nodes, and of them applied / failed / timed out / pending. One statement. */
export async function waveCounts(db: DbOrTx, rolloutId: string): Promise<WaveCounts[]> {
  const rows = await db
    .select({
      wave: rolloutNodes.wave,
      nodes: sql<number>`count(*)::int`,
      applied: sql<number>`(count(*) filter (where ${rolloutNodes.outcome} = 'applied'))::int`,
      failed: sql<number>`(count(*) filter (where ${rolloutNodes.outcome} = 'failed'))::int`,
      timedOut: sql<number>`(count(*) filter (where ${rolloutNodes.outcome} = 'timed-out'))::int`,
      pending: sql<number>`(count(*) filter (where ${rolloutNodes.outcome} is null))::int`,
    })
    .from(rolloutNodes)
    .innerJoin(nodes, eq(nodes.id, rolloutNodes.nodeId))
    // A node that left the compilable states (revoked, retiring, retired) before its outcome is out of the
    // wave: it gets none, and neither waits nor counts against the halt share.
    .where(and(eq(rolloutNodes.rolloutId, rolloutId), or(isNotNull(rolloutNodes.outcome), inArray(nodes.state, [...COMPILABLE_STATES]))))
    .groupBy(rolloutNodes.wave)
    .orderBy(rolloutNodes.wave);
  return rows.map((r) => ({
    ...r,
    nodes: Number(r.nodes),
    applied: Number(r.applied),
    failed: Number(r.failed),
    timedOut: Number(r.timedOut),
    pending: Number(r.pending),
  }));
}

/**
 * Whether a node running `hostVersion` runs the host release its declaration names (`declared`: its
 * `host` resources and its `package` resources named mesh-host): a `host` resource's exact version; the
 * package's Debian version as the host version it packages ("1:1.2.3-1" is 1.2.3). A package with no
 * version (installed, any version) or declared absent names no release to wait for.
 */
export function hostRunsDeclaredRelease(hostVersion: string | null, declared: unknown): boolean {
  if (!Array.isArray(declared)) return true;
  return declared.every((r: { type?: unknown; state?: unknown; version?: unknown }) => {
    if (typeof r?.version !== "string") return true;
    if (r.type === "host") return r.version === hostVersion;
    if (r.state === "absent") return true;
    return hostRunsPackageVersion(hostVersion, r.version);
  });
}

/** The halt rule: the canary halts on any failure; a later wave when its failed share (timed out counts) passes the threshold. */
export function haltsAt(wave: number, counts: Pick<WaveCounts, "nodes" | "failed" | "timedOut">, policy: StagedRolloutPolicy): string | null {
  const failed = counts.failed + counts.timedOut;
  if (wave === 0) return failed > 0 ? `canary: ${counts.failed} failed, ${counts.timedOut} timed out of ${counts.nodes}` : null;
  const percent = counts.nodes === 0 ? 0 : (failed * 100) / counts.nodes;
  return percent > policy.haltAtFailurePercent
    ? `wave ${wave}: ${failed} of ${counts.nodes} failed or timed out (${percent.toFixed(1)} % > ${policy.haltAtFailurePercent} %)`
    : null;
}

export type StepResult = "waiting" | "halted" | "wave-done" | "released" | "completed" | "not-running";

/** Advances one rollout by what its nodes reported and the time (deps.now). */
export async function advanceRollout(deps: Pick<Deps, "db" | "grants" | "now">, rolloutId: string): Promise<StepResult> {
  const now = nowOf(deps);
  const judged = await deps.db.transaction(async (tx) => {
    const [r] = await tx.select().from(rollouts).where(eq(rollouts.id, rolloutId)).for("update");
    if (r?.state !== "running") return { step: "not-running" as const };
    const policy = StagedRolloutPolicy.parse(r.policy);
    if (r.waveDoneAt) return { step: "soaking" as const, r, policy };
    const deadline = new Date(r.waveStartedAt.getTime() + policy.waveTimeoutSeconds * 1000);
    // Outcomes from the latest reports, in one statement: a report of the released version or later decides.
    // A declaration with a `host` resource (self-upgrade), or the host's own package at a version (a .deb
    // install's upgrade, decision 0007), is applied only once the node runs that release
    // (nodes.host_version, set when the new binary links): the report the old binary sends after putting the
    // new one in place has no errors, and a release that crashes at start is only known from the next one.
    // A released node in a conflict fails at once: it kept its last good declaration (the version recorded
    // at release), so its reports of that version say nothing about the new one.
    // The host's release each node's declaration names, judged here (hostRunsDeclaredRelease) so that a
    // package version with an epoch or a revision is the host version it packages.
    const hostReleases = rowsOf<{ node_id: string; host_version: string | null; declared: unknown }>(
      await tx.execute(sql`
        select rn.node_id, n.host_version,
          coalesce((select jsonb_path_query_array(b.resources, '$[*] ? (@.type == "host" || (@.type == "package" && @.name == "mesh-host"))')
            from ${declarations} d join ${declarationBodies} b on b.hash = d.hash
            where d.node_id = rn.node_id and d.version = rn.declared_version), '[]'::jsonb) as declared
        from ${rolloutNodes} rn join ${nodes} n on n.id = rn.node_id
        where rn.rollout_id = ${rolloutId}::uuid and rn.wave = ${r.currentWave} and rn.outcome is null`),
    );
    const runsDeclaredHost = hostReleases.filter((row) => hostRunsDeclaredRelease(row.host_version, row.declared)).map((row) => row.node_id);
    await tx.execute(sql`
      with s as (
        select rn.node_id,
          coalesce(lr.declaration_version >= rn.declared_version, false) as reached,
          coalesce(n.error_count = 0 and coalesce(n.rejected_version, 0) < rn.declared_version, false) as clean,
          coalesce(n.rejected_version >= rn.declared_version, false) as refused,
          n.conflicts <> '[]'::jsonb as conflicted,
          rn.node_id in (select jsonb_array_elements_text(${JSON.stringify(runsDeclaredHost)}::jsonb)::uuid) as runs_declared_host
        from ${rolloutNodes} rn join ${nodes} n on n.id = rn.node_id left join latest_reports lr on lr.node_id = n.id
        where rn.rollout_id = ${rolloutId}::uuid and rn.wave = ${r.currentWave} and rn.outcome is null
          -- A node that left the compilable states (revoked, retiring) gets no outcome: it drops out of the wave.
          and n.state in (select jsonb_array_elements_text(${JSON.stringify(COMPILABLE_STATES)}::jsonb))
      )
      update ${rolloutNodes} rn set outcome = case
          when s.conflicted or s.refused or (s.reached and not s.clean) then 'failed'
          when s.reached and s.clean and s.runs_declared_host then 'applied'
          else 'timed-out' end
      from s
      where rn.rollout_id = ${rolloutId}::uuid and rn.node_id = s.node_id
        and ((s.reached and (not s.clean or s.runs_declared_host)) or s.refused or s.conflicted or ${now.toISOString()}::timestamptz >= ${deadline.toISOString()}::timestamptz)`);
    const counts = (await waveCounts(tx, rolloutId)).find((c) => c.wave === r.currentWave);
    if (counts && counts.pending > 0) return { step: "waiting" as const };
    const result = counts ?? { wave: r.currentWave, nodes: 0, applied: 0, failed: 0, timedOut: 0, pending: 0 };
    const reason = haltsAt(r.currentWave, result, policy);
    await recordEvent(tx, {
      actor: ACTOR.rollout,
      action: "rollout.wave",
      target: rolloutId,
      result: reason ? "failed" : "ok",
      data: { id: rolloutId, role: r.roleName, toVersion: r.toVersion, ...result },
    });
    await tx
      .update(rollouts)
      .set({ waveDoneAt: now, updatedAt: now, ...(reason ? { state: "halted", haltReason: reason } : {}) })
      .where(eq(rollouts.id, rolloutId));
    if (reason) {
      const failedIds = rowsOf<{ node_id: string }>(
        await tx.execute(
          sql`select node_id from ${rolloutNodes} where rollout_id = ${rolloutId}::uuid and wave = ${r.currentWave} and outcome in ('failed', 'timed-out') order by node_id limit ${HALT_IDS_IN_EVENT}`,
        ),
      ).map((x) => x.node_id);
      // The alert evaluator turns this event into a "rollout-halted" delivery (alerts/evaluate-alerts.ts).
      await recordEvent(tx, {
        actor: ACTOR.rollout,
        action: "rollout.halt",
        target: rolloutId,
        result: "failed",
        data: {
          id: rolloutId,
          role: r.roleName,
          toVersion: r.toVersion,
          wave: r.currentWave,
          reason,
          failed: result.failed,
          timedOut: result.timedOut,
          nodes: result.nodes,
          nodeIds: failedIds,
        },
      });
      return { step: "halted" as const };
    }
    return { step: "wave-done" as const, r: { ...r, waveDoneAt: now }, policy };
  });
  if (judged.step !== "soaking" && judged.step !== "wave-done") return judged.step;
  const { r, policy } = judged;
  if (now.getTime() < r.waveDoneAt!.getTime() + policy.soakSeconds * 1000) return judged.step === "wave-done" ? "wave-done" : "waiting";
  return releaseWave(deps, rolloutId, r.currentWave + 1, now);
}

/**
 * Releases wave `wave` (or completes the rollout past its last wave): its nodes' pins are deleted and only
 * they are recompiled, released_at set, in one transaction that first takes the compiler lock (the order a
 * role save takes: compiler lock, then rollout rows) and checks the rollout is still running at wave - 1
 * with that wave done. A second call for the same wave finds current_wave moved on and does nothing.
 */
export async function releaseWave(deps: Pick<Deps, "db" | "grants">, rolloutId: string, wave: number, now: Date): Promise<StepResult> {
  return deps.db.transaction(async (tx) => {
    await lockCompiler(tx);
    const [r] = await tx.select().from(rollouts).where(eq(rollouts.id, rolloutId)).for("update");
    if (r?.state !== "running" || r.currentWave !== wave - 1 || !r.waveDoneAt) return "not-running" as const;
    if (wave >= r.waves) {
      await tx.update(rollouts).set({ state: "completed", finishedAt: now, updatedAt: now }).where(eq(rollouts.id, rolloutId));
      await recordEvent(tx, {
        actor: ACTOR.rollout,
        action: "rollout.complete",
        target: rolloutId,
        data: { id: rolloutId, role: r.roleName, toVersion: r.toVersion, waves: r.waves },
      });
      return "completed" as const;
    }
    const released = rowsOf<{ node_id: string }>(
      await tx.execute(sql`
        update ${rolloutNodes} set released_at = ${now.toISOString()}::timestamptz
        where rollout_id = ${rolloutId}::uuid and wave = ${wave} and released_at is null
        returning node_id`),
    ).map((x) => x.node_id);
    // By the ids just released, as one array (a hashed = any): a join, planned on the statistics of a pins
    // table filled a moment ago (none yet), nest-loops over every pin of the role per released node.
    await tx.execute(sql`
      delete from ${rolePins}
      where role_name = ${r.roleName} and rollout_id = ${rolloutId}::uuid
        and node_id = any(${`{${released.join(",")}}`}::uuid[])`);
    await tx.update(rollouts).set({ currentWave: wave, waveStartedAt: now, waveDoneAt: null, updatedAt: now }).where(eq(rollouts.id, rolloutId));
    // Only the released nodes can change (only their pins went): the compile touches only them.
    await recompileFleet(tx, { actor: ACTOR.rollout, grants: deps.grants }, { ids: released });
    await markReleased(tx, rolloutId, wave);
    return "released" as const;
  });
}

/** Ids of the rollouts to advance: every running one. */
export async function runningRollouts(db: DbOrTx): Promise<string[]> {
  return (
    await db
      .select({ id: rollouts.id })
      .from(rollouts)
      .where(and(eq(rollouts.state, "running")))
  ).map((r) => r.id);
}
