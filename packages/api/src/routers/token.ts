import { authedProcedure, router } from "../trpc";
import { createToken, CreateTokenInput } from "../services/create-token";

export const tokenRouter = router({
  create: authedProcedure
    .input(CreateTokenInput.optional())
    .mutation(({ ctx, input }) => createToken(ctx, { actor: ctx.actor, publicUrl: ctx.publicUrl, input: input ?? {} })),
});
