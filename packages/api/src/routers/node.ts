import { z } from "zod";
import { authedProcedure, router } from "../trpc";
import { listNodes, ListNodesInput } from "../services/list-nodes";
import { getNode } from "../services/get-node";
import { RetireInput, retireNode, revokeNode } from "../services/lifecycle";
import { SetLabelsInput, setLabels } from "../services/set-labels";

export const nodeRouter = router({
  list: authedProcedure.input(ListNodesInput.optional()).query(({ ctx, input }) => listNodes(ctx, input)),
  get: authedProcedure.input(z.strictObject({ id: z.uuid() })).query(({ ctx, input }) => getNode(ctx, input.id)),
  setLabels: authedProcedure.input(SetLabelsInput).mutation(({ ctx, input }) => setLabels(ctx, { actor: ctx.actor, input })),
  retire: authedProcedure.input(RetireInput).mutation(({ ctx, input }) => retireNode(ctx, { actor: ctx.actor, input })),
  revoke: authedProcedure.input(z.strictObject({ id: z.uuid() })).mutation(({ ctx, input }) => revokeNode(ctx, { actor: ctx.actor, id: input.id })),
});
