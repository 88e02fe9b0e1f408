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
  list: authedProcedure.output(RoleList).query(({ ctx }) => listRoles(ctx, { showContent: seesContent(ctx.role) })),
  // A mutation only because a role (file contents) can be larger than a URL; it saves nothing.
  plan: adminProcedure.input(Role).output(RolePlan).mutation(({ ctx, input }) => planRole(ctx, { input })),
  upsert: adminProcedure
    .input(RoleUpsert)
    .output(RoleSaved)
    // After the schema passed: the body as sent, so the role is kept in its author's key order too.
    .use(async ({ getRawInput, next }) => next({ ctx: { source: authorSource(await getRawInput()) } }))
    .mutation(({ ctx, input: { confirmConflicts, message, rollout, rolloutPolicy, ...input } }) =>
      upsertRole(ctx, { actor: ctx.actor, input, confirmConflicts, source: ctx.source, message: message || null, rollout, rolloutPolicy }),
    ),
  /** Every node whose current declaration includes the role reconciles now (hosts that read the reconcile frame). */
  reconcile: adminProcedure.input(ReconcileRoleInput).output(ReconcileAnswer).mutation(({ ctx, input }) => reconcileRole(ctx, { actor: ctx.actor, input })),
  delete: adminProcedure.input(z.strictObject({ name: RoleName })).output(RoleDeleted).mutation(({ ctx, input }) => deleteRole(ctx, { actor: ctx.actor, name: input.name })),
  /** The role's versions, newest first, a page at a time (a deleted role's too). */
  versions: authedProcedure.input(ListRoleVersionsInput).output(RoleVersionPage).query(({ ctx, input }) => listRoleVersions(ctx, input)),
  /** One version whole; inline content redacted for non-admins, as role.list. */
  version: authedProcedure
    .input(RoleVersionInput)
    .output(RoleVersionDetail)
    .query(({ ctx, input }) => getRoleVersion(ctx, { ...input, showContent: seesContent(ctx.role) })),
  /** What changed from one version to another (either order). */
  diff: authedProcedure
    .input(RoleDiffInput)
    .output(RoleDiffOutput)
    .query(({ ctx, input }) => diffRoleVersions(ctx, { ...input, showContent: seesContent(ctx.role) })),
  /** Saves an old version's content as a new version, through role.upsert's path (a deleted role is made again). */
  rollback: adminProcedure
    .input(RollbackRoleInput.extend({ rollout: RolloutPolicy.optional().meta({ description: "Overrides the role's rollout policy for this save, as role.upsert's." }) }))
    .output(RollbackRoleOutput)
    .mutation(({ ctx, input: { rollout, ...input } }) => rollbackRole(ctx, { actor: ctx.actor, ...input, rollout })),
});
