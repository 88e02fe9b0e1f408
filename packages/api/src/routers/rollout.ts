// rollout.*: staged rollouts of role changes (issue 14). A rollout starts with role.upsert (its `rollout`
// policy, or the role's default); these read them and act on them. Reads need a caller, acts an admin;
// every act is one audit event (rollout.pause / resume / continue / rollback). The worker's own steps are
// audited as rollout.wave / halt / complete by "system:rollout".
import { z } from "zod";
import { RoleName, ROLLOUT_STATES, ROLLOUT_OUTCOMES, StagedRolloutPolicy, RoleVersionMessage } from "@mesh/protocol";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { actOnRollout, getRollout, listRollouts, rollbackRollout } from "../rollouts/rollout-actions";

const RolloutId = z.strictObject({ id: z.string().uuid() });

const RolloutSummary = z.object({
  id: z.string(),
  roleName: z.string(),
  /** The version the reached nodes had (0: the role was new). */
  fromVersion: z.number().int(),
  toVersion: z.number().int(),
  state: z.enum(ROLLOUT_STATES),
  /** How many waves (wave 0 is the canary). */
  waves: z.number().int(),
  /** The wave released last. */
  currentWave: z.number().int(),
  haltReason: z.string().nullable(),
  /** A rollback's rollout: the rollout it undid. */
  rollbackOf: z.string().nullable(),
  supersededBy: z.string().nullable(),
  /** Who started it (the save's caller). */
  actor: z.string(),
  createdAt: z.date(),
  finishedAt: z.date().nullable(),
});

const WaveCounts = z.object({
  wave: z.number().int(),
  nodes: z.number().int(),
  applied: z.number().int(),
  failed: z.number().int(),
  timedOut: z.number().int(),
  /** Not released yet, or released and not reported yet. */
  pending: z.number().int(),
});

const RolloutDetail = RolloutSummary.extend({
  policy: StagedRolloutPolicy,
  /** The plan summary it started from: nodes reached, nodes unchanged (released at once), wave sizes. */
  plan: z.object({
    nodes: z.number().int(),
    unchanged: z.number().int(),
    waves: z.array(z.number().int()),
    fromVersion: z.number().int(),
    toVersion: z.number().int(),
  }),
  waveStartedAt: z.date(),
  /** When every node of the current wave had an outcome (the soak runs from here); null while it waits. */
  waveDoneAt: z.date().nullable(),
  waveCounts: z.array(WaveCounts),
  /** Who did what, oldest first: rollout.start, .wave, .halt, .pause, .resume, .continue, .rollback, .complete. */
  history: z.array(z.object({ at: z.date(), actor: z.string(), action: z.string(), result: z.string(), data: z.unknown() })),
});

const ActResult = z.object({ id: z.string(), state: z.enum(ROLLOUT_STATES) });

export const RolloutOutcome = z.enum(ROLLOUT_OUTCOMES);

export const rolloutRouter = router({
  list: authedProcedure
    .meta({ description: "Staged rollouts, newest first, at most 100; role narrows to one role." })
    .input(z.strictObject({ role: RoleName.optional() }).default({}))
    .output(z.object({ items: z.array(RolloutSummary) }))
    .query(({ ctx, input }) => listRollouts(ctx, input)),
  get: authedProcedure
    .meta({ description: "One rollout: its policy, plan, waves with their outcomes, and who did what." })
    .input(RolloutId)
    .output(RolloutDetail)
    .query(({ ctx, input }) => getRollout(ctx, input)),
  pause: adminProcedure
    .meta({ description: "A running rollout releases no further wave until resumed." })
    .input(RolloutId)
    .output(ActResult)
    .mutation(({ ctx, input }) => actOnRollout(ctx, { actor: ctx.actor, id: input.id, act: "pause" })),
  resume: adminProcedure
    .meta({ description: "A paused rollout goes on releasing waves." })
    .input(RolloutId)
    .output(ActResult)
    .mutation(({ ctx, input }) => actOnRollout(ctx, { actor: ctx.actor, id: input.id, act: "resume" })),
  continue: adminProcedure
    .meta({ description: "A halted rollout goes on past its halt: the next wave at the worker's next tick." })
    .input(RolloutId)
    .output(ActResult)
    .mutation(({ ctx, input }) => actOnRollout(ctx, { actor: ctx.actor, id: input.id, act: "continue" })),
  rollback: adminProcedure
    .meta({
      description:
        "Saves a new role version with the rollout's from-version content, to the nodes already released, in the same waves; the rollout becomes rolled-back.",
    })
    .input(RolloutId.extend({ message: RoleVersionMessage.optional(), confirmConflicts: z.boolean().optional() }))
    .output(z.object({ rolledBack: z.string(), version: z.number().int(), rollout: z.object({ id: z.string(), plan: RolloutDetail.shape.plan }) }))
    .mutation(({ ctx, input }) =>
      rollbackRollout(ctx, { actor: ctx.actor, id: input.id, message: input.message || null, confirmConflicts: input.confirmConflicts }),
    ),
});
