import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { NodeCounts, NodePage } from "./schemas/node-list";
import { NodeDetail } from "./schemas/node-detail";
import { BulkLabelsSet, BulkRetiring, BulkRevoked, LabelsPlan, LabelsSet, NodeRenamed, NodeRetiring, NodeRevoked, NodesForgotten, ReplacementApproved, ReplacementRejected } from "./schemas/node-actions";
import { ReconcileAnswer } from "./schemas/reconcile-answer";
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
  list: authedProcedure.input(ListNodesInput.optional()).output(NodePage).query(({ ctx, input }) => listNodes(ctx, input)),
  counts: authedProcedure.output(NodeCounts).query(({ ctx }) => countNodes(ctx)),
  get: authedProcedure.input(z.strictObject({ id: z.uuid() })).output(NodeDetail).query(({ ctx, input }) => getNode(ctx, input.id, { showContent: seesContent(ctx.role) })),
  // What setLabels would do, saving nothing (admins: the plan shows file content diffs).
  planLabels: adminProcedure.input(PlanLabelsInput).output(LabelsPlan).query(({ ctx, input }) => planLabels(ctx, input)),
  setLabels: adminProcedure.input(SetLabelsInput).output(LabelsSet).mutation(({ ctx, input }) => setLabels(ctx, { actor: ctx.actor, input })),
  rename: adminProcedure.input(RenameNodeInput).output(NodeRenamed).mutation(({ ctx, input }) => renameNode(ctx, { actor: ctx.actor, input })),
  retire: adminProcedure.input(RetireInput).output(NodeRetiring).mutation(({ ctx, input }) => retireNode(ctx, { actor: ctx.actor, input })),
  approveReplacement: adminProcedure.input(ReplacementInput).output(ReplacementApproved).mutation(({ ctx, input }) => approveReplacement(ctx, { actor: ctx.actor, input })),
  rejectReplacement: adminProcedure.input(ReplacementInput).output(ReplacementRejected).mutation(({ ctx, input }) => rejectReplacement(ctx, { actor: ctx.actor, input })),
  revoke: adminProcedure.input(z.strictObject({ id: z.uuid() })).output(NodeRevoked).mutation(({ ctx, input }) => revokeNode(ctx, { actor: ctx.actor, id: input.id })),
  // Act now (issue 13): one call, one audit event, one notification, whatever the number of nodes.
  reconcile: adminProcedure.input(ReconcileNodesInput).output(ReconcileAnswer).mutation(({ ctx, input }) => reconcileNodes(ctx, { actor: ctx.actor, input })),
  correctDrift: adminProcedure.input(DriftInput).output(ReconcileAnswer).mutation(({ ctx, input }) => resolveDrift(ctx, { actor: ctx.actor, how: "correct", input })),
  acceptDrift: adminProcedure.input(DriftInput).output(ReconcileAnswer).mutation(({ ctx, input }) => resolveDrift(ctx, { actor: ctx.actor, how: "accept", input })),
  forget: adminProcedure.input(BulkIdsInput).output(NodesForgotten).mutation(({ ctx, input }) => forgetNodes(ctx, { actor: ctx.actor, input })),
  bulkSetLabels: adminProcedure.input(BulkSetLabelsInput).output(BulkLabelsSet).mutation(({ ctx, input }) => bulkSetLabels(ctx, { actor: ctx.actor, input })),
  bulkRetire: adminProcedure.input(BulkRetireInput).output(BulkRetiring).mutation(({ ctx, input }) => bulkRetire(ctx, { actor: ctx.actor, input })),
  bulkRevoke: adminProcedure.input(BulkIdsInput).output(BulkRevoked).mutation(({ ctx, input }) => bulkRevoke(ctx, { actor: ctx.actor, input })),
});
