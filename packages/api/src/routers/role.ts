import { z } from "zod";
import { Role, RoleName, RoleUpsert, RolloutPolicy } from "@mesh/protocol";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { RoleDeleted, RoleList, RolePlan, RoleSaved } from "./schemas/role";
import { ReconcileAnswer } from "./schemas/reconcile-answer";
import { authorSource, deleteRole, listRoles, upsertRole } from "../services/roles";
import { planRole } from "../services/plan-role";
import { ReconcileRoleInput, reconcileRole } from "../services/reconcile-now";
import { seesContent } from "../services/redact-content";
import {
  diffRoleVersions,
  getRoleVersion,
  listRoleVersions,
  ListRoleVersionsInput,
  RoleDiffInput,
  RoleDiffOutput,
  rollbackRole,
  RollbackRoleInput,
  RollbackRoleOutput,
  RoleVersionDetail,
  RoleVersionInput,
  RoleVersionPage,
} from "../services/role-versions";

export const roleRouter = router({
  list: authedProcedure
    .meta({
      description:
        "Every role, with its selector, resources, grants, version and default rollout policy. Inline content is redacted unless the caller is an admin (who also gets the role as its author wrote it).",
    })
    .output(RoleList)
    .query(({ ctx }) => listRoles(ctx, { showContent: seesContent(ctx.role) })),
  plan: adminProcedure
    .meta({
      description:
        "What saving this role would do to the fleet, saving nothing: the nodes it matches, what changes on each machine (grouped, with content diffs), and conflicts. A mutation only because a role can be larger than a URL.",
    })
    .input(Role)
    .output(RolePlan)
    .mutation(({ ctx, input }) => planRole(ctx, { input })),
  upsert: adminProcedure
    .meta({
      description:
        "Creates or replaces a role and recompiles every node it touches, all at once or as a staged rollout (rollout, or the role's rolloutPolicy). Refused with CONFLICT if it would put nodes into a conflict they do not have now, unless confirmConflicts.",
    })
    .input(RoleUpsert)
    .output(RoleSaved)
    // After the schema passed: the body as sent, so the role is kept in its author's key order too.
    .use(async ({ getRawInput, next }) => next({ ctx: { source: authorSource(await getRawInput()) } }))
    .mutation(({ ctx, input: { confirmConflicts, message, rollout, rolloutPolicy, ...input } }) =>
      upsertRole(ctx, { actor: ctx.actor, input, confirmConflicts, source: ctx.source, message: message || null, rollout, rolloutPolicy }),
    ),
  reconcile: adminProcedure
    .meta({ description: "Asks every node whose current declaration includes the role to reconcile now." })
    .input(ReconcileRoleInput)
    .output(ReconcileAnswer)
    .mutation(({ ctx, input }) => reconcileRole(ctx, { actor: ctx.actor, input })),
  delete: adminProcedure
    .meta({ description: "Deletes the role and recompiles the nodes that had it: hosts remove its resources." })
    .input(z.strictObject({ name: RoleName }))
    .output(RoleDeleted)
    .mutation(({ ctx, input }) => deleteRole(ctx, { actor: ctx.actor, name: input.name })),
  versions: authedProcedure
    .meta({ description: "The role's versions, newest first, a page at a time (a deleted role's too)." })
    .input(ListRoleVersionsInput)
    .output(RoleVersionPage)
    .query(({ ctx, input }) => listRoleVersions(ctx, input)),
  version: authedProcedure
    .meta({ description: "One version of a role whole; inline content redacted for non-admins, as role.list." })
    .input(RoleVersionInput)
    .output(RoleVersionDetail)
    .query(({ ctx, input }) => getRoleVersion(ctx, { ...input, showContent: seesContent(ctx.role) })),
  diff: authedProcedure
    .meta({ description: "What changed from one version of a role to another (either order)." })
    .input(RoleDiffInput)
    .output(RoleDiffOutput)
    .query(({ ctx, input }) => diffRoleVersions(ctx, { ...input, showContent: seesContent(ctx.role) })),
  rollback: adminProcedure
    .meta({ description: "Saves an old version's content as a new version, through role.upsert's path (a deleted role is made again)." })
    .input(
      RollbackRoleInput.extend({
        rollout: RolloutPolicy.optional().meta({ description: "Overrides the role's rollout policy for this save, as role.upsert's." }),
      }),
    )
    .output(RollbackRoleOutput)
    .mutation(({ ctx, input: { rollout, ...input } }) => rollbackRole(ctx, { actor: ctx.actor, ...input, rollout })),
});
