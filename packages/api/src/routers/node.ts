import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { NodeCounts, NodePage } from "./schemas/node-list";
import { NodeDetail } from "./schemas/node-detail";
import {
  BulkLabelsSet,
  BulkRetiring,
  BulkRevoked,
  LabelsPlan,
  LabelsSet,
  NodeRenamed,
  NodeRetiring,
  NodeRevoked,
  NodesForgotten,
  ReplacementApproved,
  ReplacementRejected,
} from "./schemas/node-actions";
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
  list: authedProcedure
    .meta({
      description:
        "One page of the fleet, filtered (state, health, labels, role, drift, search) and sorted on the server; `total` counts every match. Forgotten nodes are left out.",
    })
    .input(ListNodesInput.optional())
    .output(NodePage)
    .query(({ ctx, input }) => listNodes(ctx, input)),
  counts: authedProcedure
    .meta({ description: "How many nodes are in each state and each health, and how many drift: the figures at the top of the fleet page." })
    .output(NodeCounts)
    .query(({ ctx }) => countNodes(ctx)),
  get: authedProcedure
    .meta({
      description:
        "Everything about one node: state, labels, profile, inventory, declared and applied version, the current declaration, the latest report (owned, drift, errors, skipped), recent events, grants and replacement claims. Inline content is redacted unless the caller is an admin.",
    })
    .input(z.strictObject({ id: z.uuid() }))
    .output(NodeDetail)
    .query(({ ctx, input }) => getNode(ctx, input.id, { showContent: seesContent(ctx.role) })),
  // What setLabels would do, saving nothing (admins: the plan shows file content diffs).
  planLabels: adminProcedure
    .meta({
      description:
        "What setLabels would do to the node, saving nothing: roles gained and lost, the changes on the machine (with content diffs), and conflicts.",
    })
    .input(PlanLabelsInput)
    .output(LabelsPlan)
    .query(({ ctx, input }) => planLabels(ctx, input)),
  setLabels: adminProcedure
    .meta({
      description:
        "Replaces the node's labels and recompiles its declaration. Refused with CONFLICT if the labels put it into a conflict it does not have now, unless confirmConflicts.",
    })
    .input(SetLabelsInput)
    .output(LabelsSet)
    .mutation(({ ctx, input }) => setLabels(ctx, { actor: ctx.actor, input })),
  rename: adminProcedure
    .meta({ description: 'Sets the node\'s display name ("" goes back to its hostname).' })
    .input(RenameNodeInput)
    .output(NodeRenamed)
    .mutation(({ ctx, input }) => renameNode(ctx, { actor: ctx.actor, input })),
  retire: adminProcedure
    .meta({
      description:
        "Retires the node gracefully: a final empty declaration removes what it owns (or forgets it, with keepResources), then its credential and grants are revoked.",
    })
    .input(RetireInput)
    .output(NodeRetiring)
    .mutation(({ ctx, input }) => retireNode(ctx, { actor: ctx.actor, input })),
  approveReplacement: adminProcedure
    .meta({
      description:
        "Approves a pending node's claim to be the live node it names: that node takes the claimant's key and facts, its old key is refused from now on and its open link closed; the pending node ends.",
    })
    .input(ReplacementInput)
    .output(ReplacementApproved)
    .mutation(({ ctx, input }) => approveReplacement(ctx, { actor: ctx.actor, input })),
  rejectReplacement: adminProcedure
    .meta({ description: "Rejects a pending node's claim: the claimant is revoked." })
    .input(ReplacementInput)
    .output(ReplacementRejected)
    .mutation(({ ctx, input }) => rejectReplacement(ctx, { actor: ctx.actor, input })),
  revoke: adminProcedure
    .meta({ description: "Revokes a lost node at once: its credential and every grant, at the providers; an open link is closed." })
    .input(z.strictObject({ id: z.uuid() }))
    .output(NodeRevoked)
    .mutation(({ ctx, input }) => revokeNode(ctx, { actor: ctx.actor, id: input.id })),
  // Act now (issue 13): one call, one audit event, one notification, whatever the number of nodes.
  reconcile: adminProcedure
    .meta({
      description:
        "Asks the nodes to reconcile now (one audit event for all of them); says how many were sent the request, are offline or run a host too old to read it.",
    })
    .input(ReconcileNodesInput)
    .output(ReconcileAnswer)
    .mutation(({ ctx, input }) => reconcileNodes(ctx, { actor: ctx.actor, input })),
  correctDrift: adminProcedure
    .meta({ description: "Asks the node to correct the named drifted resources now (resources whose onDrift is report)." })
    .input(DriftInput)
    .output(ReconcileAnswer)
    .mutation(({ ctx, input }) => resolveDrift(ctx, { actor: ctx.actor, how: "correct", input })),
  acceptDrift: adminProcedure
    .meta({ description: "Takes the machine's state of the named drifted resources as the declared one (resources whose onDrift is report)." })
    .input(DriftInput)
    .output(ReconcileAnswer)
    .mutation(({ ctx, input }) => resolveDrift(ctx, { actor: ctx.actor, how: "accept", input })),
  forget: adminProcedure
    .meta({ description: "Removes retired or revoked nodes from the fleet list; their rows and audit history stay, and node.get still answers." })
    .input(BulkIdsInput)
    .output(NodesForgotten)
    .mutation(({ ctx, input }) => forgetNodes(ctx, { actor: ctx.actor, input })),
  bulkSetLabels: adminProcedure
    .meta({ description: "Sets and removes labels on many nodes in one call, recompiling them." })
    .input(BulkSetLabelsInput)
    .output(BulkLabelsSet)
    .mutation(({ ctx, input }) => bulkSetLabels(ctx, { actor: ctx.actor, input })),
  bulkRetire: adminProcedure
    .meta({ description: "Retires many nodes in one call, as node.retire does." })
    .input(BulkRetireInput)
    .output(BulkRetiring)
    .mutation(({ ctx, input }) => bulkRetire(ctx, { actor: ctx.actor, input })),
  bulkRevoke: adminProcedure
    .meta({ description: "Revokes many nodes in one call, as node.revoke does." })
    .input(BulkIdsInput)
    .output(BulkRevoked)
    .mutation(({ ctx, input }) => bulkRevoke(ctx, { actor: ctx.actor, input })),
});
