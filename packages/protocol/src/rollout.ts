// Staged rollout of a role change (issue 14): the policy an admin chooses (or a role keeps as its
// default), shared by the API, the dashboard and automation. The state machine that runs it lives
// in packages/api (rollouts/), described in the rollout decision in docs/decisions.
import { z } from "zod";
import { Selector, refineRole, roleSaveFields } from "./role";

/** The first wave: a number of nodes, a share of the nodes the change reaches, or the nodes a selector picks. */
export const RolloutCanary = z.union([
  z.strictObject({ count: z.number().int().min(1).max(100_000) }),
  z.strictObject({ percent: z.number().gt(0).max(100) }),
  z.strictObject({ selector: Selector }),
]);
export type RolloutCanary = z.infer<typeof RolloutCanary>;

/** Every later wave: a number of nodes or a share of the nodes the change reaches. */
export const RolloutWaveSize = z.union([
  z.strictObject({ size: z.number().int().min(1).max(100_000) }),
  z.strictObject({ percent: z.number().gt(0).max(100) }),
]);
export type RolloutWaveSize = z.infer<typeof RolloutWaveSize>;

export const StagedRolloutPolicy = z.strictObject({
  mode: z.literal("staged"),
  canary: RolloutCanary.default({ count: 1 }),
  waves: RolloutWaveSize.default({ percent: 10 }),
  /** A wave (after the canary) whose failed or timed-out share passes this halts the rollout; any canary failure does. */
  haltAtFailurePercent: z.number().min(0).max(100).default(5),
  /** Time to wait after a wave's nodes all reported before the next wave starts. */
  soakSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(0),
  /** A node of the wave that has not reported the new version by then counts as failed (timed out). */
  waveTimeoutSeconds: z
    .number()
    .int()
    .min(10)
    .max(7 * 86_400)
    .default(600),
});
export type StagedRolloutPolicy = z.infer<typeof StagedRolloutPolicy>;

/** Every matching node at once: today's behaviour, and what a role without a policy does. The plan warns about it for large changes. */
export const AllAtOncePolicy = z.strictObject({ mode: z.literal("all-at-once") });

export const RolloutPolicy = z.discriminatedUnion("mode", [StagedRolloutPolicy, AllAtOncePolicy]);
export type RolloutPolicy = z.infer<typeof RolloutPolicy>;
export type RolloutPolicyInput = z.input<typeof RolloutPolicy>;

/** What the dashboard proposes for a role that has no policy yet: canary one node, then 10 % at a time, halt at 5 % failures. */
export const RECOMMENDED_ROLLOUT_POLICY: StagedRolloutPolicy = StagedRolloutPolicy.parse({ mode: "staged" });

/** A change reaching more nodes than this all at once is warned about in the plan. */
export const ALL_AT_ONCE_WARNING_NODES = 20;

export const ROLLOUT_STATES = ["running", "paused", "halted", "completed", "superseded", "rolled-back"] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

/** A wave node's result: reported the new version without errors, with errors, or not within the wave timeout. */
export const ROLLOUT_OUTCOMES = ["applied", "failed", "timed-out"] as const;
export type RolloutOutcome = (typeof ROLLOUT_OUTCOMES)[number];

/**
 * role.upsert's input (RoleSave with the rollout fields; here, not in role.ts, which this file imports).
 * `rollout`: the policy for this save, overriding the role's default. `rolloutPolicy`: store as the role's
 * default (null clears it; omitted keeps it); this save uses it too unless `rollout` is given. A role with
 * no default and a save with no `rollout` rolls out all at once (the behaviour before issue 14).
 */
export const RoleUpsert = z
  .strictObject({
    ...roleSaveFields,
    rollout: RolloutPolicy.optional().meta({ description: "The rollout of this save (overrides the role's default policy)." }),
    rolloutPolicy: RolloutPolicy.nullable().optional().meta({ description: "Store as the role's default rollout policy (null clears it)." }),
  })
  .superRefine(refineRole);
export type RoleUpsertInput = z.input<typeof RoleUpsert>;
