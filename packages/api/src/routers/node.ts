import { z } from "zod";
import { authedProcedure, router } from "../trpc";
import { listNodes, ListNodesInput } from "../services/list-nodes";
import { getNode } from "../services/get-node";

export const nodeRouter = router({
  list: authedProcedure.input(ListNodesInput.optional()).query(({ ctx, input }) => listNodes(ctx, input)),
  get: authedProcedure.input(z.strictObject({ id: z.uuid() })).query(({ ctx, input }) => getNode(ctx, input.id)),
});
