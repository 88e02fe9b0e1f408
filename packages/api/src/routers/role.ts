import { z } from "zod";
import { Role, RoleName, RoleUpsert } from "@mesh/protocol";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { authorSource, deleteRole, listRoles, upsertRole } from "../services/roles";
import { planRole } from "../services/plan-role";
import { ReconcileRoleInput, reconcileRole } from "../services/reconcile-now";
import { seesContent } from "../services/redact-content";

export const roleRouter = router({
  list: authedProcedure.query(({ ctx }) => listRoles(ctx, { showContent: seesContent(ctx.role) })),
  // A mutation only because a role (file contents) can be larger than a URL; it saves nothing.
  plan: adminProcedure.input(Role).mutation(({ ctx, input }) => planRole(ctx, { input })),
  upsert: adminProcedure
    .input(RoleUpsert)
    // After the schema passed: the body as sent, so the role is kept in its author's key order too.
    .use(async ({ getRawInput, next }) => next({ ctx: { source: authorSource(await getRawInput()) } }))
    .mutation(({ ctx, input: { confirmConflicts, message, rollout, rolloutPolicy, ...input } }) =>
      upsertRole(ctx, { actor: ctx.actor, input, confirmConflicts, source: ctx.source, message: message || null, rollout, rolloutPolicy }),
    ),
  /** Every node whose current declaration includes the role reconciles now (hosts that read the reconcile frame). */
  reconcile: adminProcedure.input(ReconcileRoleInput).mutation(({ ctx, input }) => reconcileRole(ctx, { actor: ctx.actor, input })),
  delete: adminProcedure.input(z.strictObject({ name: RoleName })).mutation(({ ctx, input }) => deleteRole(ctx, { actor: ctx.actor, name: input.name })),
});
