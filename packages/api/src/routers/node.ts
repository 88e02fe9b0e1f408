import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { listNodes, ListNodesInput } from "../services/list-nodes";
import { getNode } from "../services/get-node";
import { seesContent } from "../services/redact-content";
import { countNodes } from "../services/count-nodes";
import { RetireInput, retireNode, revokeNode } from "../services/lifecycle";
import { SetLabelsInput, setLabels } from "../services/set-labels";
import { RenameNodeInput, renameNode } from "../services/rename-node";
import { PlanLabelsInput, planLabels } from "../services/plan-labels";
import { ReplacementInput, approveReplacement, rejectReplacement } from "../services/node-replacement";

export const nodeRouter = router({
  list: authedProcedure.input(ListNodesInput.optional()).query(({ ctx, input }) => listNodes(ctx, input)),
  counts: authedProcedure.query(({ ctx }) => countNodes(ctx)),
  get: authedProcedure.input(z.strictObject({ id: z.uuid() })).query(({ ctx, input }) => getNode(ctx, input.id, { showContent: seesContent(ctx.role) })),
  // What setLabels would do, saving nothing (admins: the plan shows file content diffs).
  planLabels: adminProcedure.input(PlanLabelsInput).query(({ ctx, input }) => planLabels(ctx, input)),
  setLabels: adminProcedure.input(SetLabelsInput).mutation(({ ctx, input }) => setLabels(ctx, { actor: ctx.actor, input })),
  rename: adminProcedure.input(RenameNodeInput).mutation(({ ctx, input }) => renameNode(ctx, { actor: ctx.actor, input })),
  retire: adminProcedure.input(RetireInput).mutation(({ ctx, input }) => retireNode(ctx, { actor: ctx.actor, input })),
  approveReplacement: adminProcedure.input(ReplacementInput).mutation(({ ctx, input }) => approveReplacement(ctx, { actor: ctx.actor, input })),
  rejectReplacement: adminProcedure.input(ReplacementInput).mutation(({ ctx, input }) => rejectReplacement(ctx, { actor: ctx.actor, input })),
  revoke: adminProcedure.input(z.strictObject({ id: z.uuid() })).mutation(({ ctx, input }) => revokeNode(ctx, { actor: ctx.actor, id: input.id })),
});
