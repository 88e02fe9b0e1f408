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
import { DriftInput, ReconcileNodesInput, reconcileNodes, resolveDrift } from "../services/reconcile-now";
import { BulkIdsInput, BulkRetireInput, BulkSetLabelsInput, bulkRetire, bulkRevoke, bulkSetLabels, forgetNodes } from "../services/bulk-actions";
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
  // Act now (issue 13): one call, one audit event, one notification, whatever the number of nodes.
  reconcile: adminProcedure.input(ReconcileNodesInput).mutation(({ ctx, input }) => reconcileNodes(ctx, { actor: ctx.actor, input })),
  correctDrift: adminProcedure.input(DriftInput).mutation(({ ctx, input }) => resolveDrift(ctx, { actor: ctx.actor, how: "correct", input })),
  acceptDrift: adminProcedure.input(DriftInput).mutation(({ ctx, input }) => resolveDrift(ctx, { actor: ctx.actor, how: "accept", input })),
  forget: adminProcedure.input(BulkIdsInput).mutation(({ ctx, input }) => forgetNodes(ctx, { actor: ctx.actor, input })),
  bulkSetLabels: adminProcedure.input(BulkSetLabelsInput).mutation(({ ctx, input }) => bulkSetLabels(ctx, { actor: ctx.actor, input })),
  bulkRetire: adminProcedure.input(BulkRetireInput).mutation(({ ctx, input }) => bulkRetire(ctx, { actor: ctx.actor, input })),
  bulkRevoke: adminProcedure.input(BulkIdsInput).mutation(({ ctx, input }) => bulkRevoke(ctx, { actor: ctx.actor, input })),
});
