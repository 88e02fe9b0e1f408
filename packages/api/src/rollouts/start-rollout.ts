// Starts a staged rollout of a role, inside the transaction that saved the role's new version (and holds
// the compiler lock), before that transaction's fleet compile: pins every node the change reaches at the
// version it has now, puts them in waves, releases the canary (wave 0). The caller's recompileFleet then
// compiles the canary with the new version and everyone else as before; markReleased records the versions.
// Set-based: a few statements whatever the number of nodes.
import { profileFacts } from "../services/profile-facts";
import { randomUUID } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import { nodes, rolePins, rollouts, rolloutNodes, roleVersions, type DbOrTx } from "@mesh/db";
import { canonicalJson, type Role, type StagedRolloutPolicy } from "@mesh/protocol";
import { roleOfVersionRow } from "../services/write-role-version";
import { matchesSelector } from "../compile/selector";
import { COMPILABLE_STATES } from "../services/recompile-node";
import { recordEvent } from "../services/record-event";
import { planWaves, type WaveCandidate } from "./plan-waves";

export const ACTIVE_ROLLOUT_STATES = ["running", "paused", "halted"] as const;

export interface StartRolloutInput {
  roleName: string;
  /** The role's newest version before this save (0: the role is new). */
  fromVersion: number;
  toVersion: number;
  /** The role as saved (toVersion). */
  role: Role;
  policy: StagedRolloutPolicy;
  actor: string;
  now: Date;
  /** A rollback: these nodes only, in these waves (the rolled-back rollout's released nodes). */
  fixedWaves?: Map<string, number>;
  rollbackOf?: string;
}

export interface RolloutPlanSummary {
  /** Nodes the change reaches (pinned, then released wave by wave). */
  nodes: number;
  /** Nodes the selectors match whose declaration the change leaves as it is: released at once. */
  unchanged: number;
  waves: number[];
  fromVersion: number;
  toVersion: number;
}

export interface StartedRollout {
  id: string;
  plan: RolloutPlanSummary;
}

/**
 * Marks the role's active rollouts superseded (by the rollout that replaces them, if any). Their pins stay
 * until the caller rewrites them: a staged save keeps each node at the version it has now; an all-at-once
 * save or a delete drops them (dropPins).
 */
export async function supersedeRollouts(tx: DbOrTx, roleName: string, by: string | null, now: Date): Promise<string[]> {
  const rows = await tx
    .update(rollouts)
    .set({ state: "superseded", supersededBy: by, finishedAt: now, updatedAt: now })
    .where(and(eq(rollouts.roleName, roleName), inArray(rollouts.state, [...ACTIVE_ROLLOUT_STATES])))
    .returning({ id: rollouts.id });
  return rows.map((r) => r.id);
}

/** Every node compiles the role's newest version: after an all-at-once save, or when the role is deleted. */
export async function dropPins(tx: DbOrTx, roleName: string): Promise<void> {
  await tx.delete(rolePins).where(eq(rolePins.roleName, roleName));
}

const content = (r: Role | null) => (r ? canonicalJson({ resources: r.resources, grants: r.grants ?? [] }) : null);

export async function startRollout(tx: DbOrTx, input: StartRolloutInput): Promise<StartedRollout> {
  const id = randomUUID();
  const { roleName, role, now } = input;
  const superseded = await supersedeRollouts(tx, roleName, id, now);
  // What each node has now: its pin (a superseded rollout's, or a node never released), else fromVersion.
  const pins = new Map(
    (await tx.select({ nodeId: rolePins.nodeId, version: rolePins.version }).from(rolePins).where(eq(rolePins.roleName, roleName))).map((p) => [
      p.nodeId,
      p.version,
    ]),
  );
  const olderVersions = [...new Set([input.fromVersion, ...pins.values()])].filter((v) => v > 0);
  const older = new Map(
    (olderVersions.length === 0
      ? []
      : await tx
          .select()
          .from(roleVersions)
          .where(and(eq(roleVersions.roleName, roleName), inArray(roleVersions.version, olderVersions)))
    ).map((r) => [r.version, roleOfVersionRow(r)]),
  );
  const selectors = [role, ...older.values()].map((r) => r.selector);
  const canarySelector = "selector" in input.policy.canary ? [input.policy.canary.selector] : [];
  const profile = profileFacts([...selectors, ...canarySelector]);
  const fixed = input.fixedWaves;
  const candidates = await tx
    .select({ id: nodes.id, labels: nodes.labels, profile, gatewayId: nodes.gatewayId })
    .from(nodes)
    .where(
      fixed
        ? and(
            inArray(nodes.state, [...COMPILABLE_STATES]),
            sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify([...fixed.keys()])}::jsonb)::uuid)`,
          )
        : inArray(nodes.state, [...COMPILABLE_STATES]),
    );

  const affected: Array<WaveCandidate & { pin: number }> = [];
  let unchanged = 0;
  const newContent = content(role);
  for (const n of candidates) {
    const facts = { labels: n.labels, profile: n.profile as Record<string, unknown> };
    const had = pins.get(n.id) ?? input.fromVersion;
    const old = older.get(had) ?? null;
    const matchedOld = old !== null && matchesSelector(old.selector, facts);
    const matchesNew = matchesSelector(role.selector, facts);
    if (!matchedOld && !matchesNew) continue;
    if (matchedOld && matchesNew && content(old) === newContent) {
      unchanged++;
      continue;
    }
    affected.push({ id: n.id, ...facts, linked: n.gatewayId !== null, pin: had });
  }

  let waveOf: Map<string, number>;
  let waves: number;
  if (fixed) {
    // The same waves as the rollout undone, numbered from 0 without gaps (a wave none of whose nodes remain goes).
    const used = [...new Set(affected.map((n) => fixed.get(n.id)!))].sort((a, b) => a - b);
    const renumber = new Map(used.map((w, i) => [w, i]));
    waveOf = new Map(affected.map((n) => [n.id, renumber.get(fixed.get(n.id)!)!]));
    waves = used.length;
  } else ({ waveOf, waves } = planWaves(affected, input.policy));
  const sizes = Array.from({ length: waves }, () => 0);
  for (const w of waveOf.values()) sizes[w]!++;
  const plan: RolloutPlanSummary = { nodes: affected.length, unchanged, waves: sizes, fromVersion: input.fromVersion, toVersion: input.toVersion };

  await tx.insert(rollouts).values({
    id,
    roleName,
    fromVersion: input.fromVersion,
    toVersion: input.toVersion,
    policy: input.policy,
    state: waves === 0 ? "completed" : "running",
    waves,
    currentWave: 0,
    waveStartedAt: now,
    plan,
    rollbackOf: input.rollbackOf ?? null,
    actor: input.actor,
    finishedAt: waves === 0 ? now : null,
  });
  // The role's pins are rewritten: every node the change reaches, at the version it has now; the rest none.
  await tx.delete(rolePins).where(eq(rolePins.roleName, roleName));
  if (affected.length > 0) {
    const rows = JSON.stringify(affected.map((n) => ({ node_id: n.id, version: n.pin, wave: waveOf.get(n.id)! })));
    await tx.execute(sql`
      insert into ${rolePins} (node_id, role_name, version, rollout_id)
      select v.node_id, ${roleName}, v.version, ${id}::uuid from jsonb_to_recordset(${rows}::jsonb) as v(node_id uuid, version int, wave int) where v.wave > 0`);
    await tx.execute(sql`
      insert into ${rolloutNodes} (rollout_id, node_id, wave, from_version, released_at)
      select ${id}::uuid, v.node_id, v.wave, v.version, case when v.wave = 0 then ${now.toISOString()}::timestamptz end from jsonb_to_recordset(${rows}::jsonb) as v(node_id uuid, version int, wave int)`);
  }
  await recordEvent(tx, {
    actor: input.actor,
    action: input.rollbackOf ? "rollout.rollback" : "rollout.start",
    target: id,
    data: {
      id,
      role: roleName,
      policy: input.policy,
      plan,
      ...(superseded.length > 0 ? { superseded } : {}),
      ...(input.rollbackOf ? { rollbackOf: input.rollbackOf } : {}),
    },
  });
  return { id, plan };
}

/**
 * After the compile that released a wave: each released node's declaration version now, the version whose
 * report decides its outcome (rollouts/advance.ts). One statement.
 */
export async function markReleased(tx: DbOrTx, rolloutId: string, wave: number): Promise<void> {
  await tx.execute(sql`
    update ${rolloutNodes} rn set declared_version = n.declared_version
    from ${nodes} n
    where rn.rollout_id = ${rolloutId}::uuid and rn.wave = ${wave} and n.id = rn.node_id`);
}
