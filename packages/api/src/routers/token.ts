import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { createToken, CreateTokenInput } from "../services/create-token";
import { listTokens, ListTokensInput, revokeToken } from "../services/tokens";

export const tokenRouter = router({
  create: adminProcedure
    .input(CreateTokenInput.optional())
    .mutation(({ ctx, input }) => createToken(ctx, { actor: ctx.actor, publicUrl: ctx.publicUrl, tlsPin: ctx.tlsPin, input: input ?? {} })),
  list: authedProcedure.input(ListTokensInput.optional()).query(({ ctx, input }) => listTokens(ctx, input)),
  revoke: adminProcedure.input(z.strictObject({ id: z.string().regex(/^[a-z0-9]{6}$/) })).mutation(({ ctx, input }) => revokeToken(ctx, { actor: ctx.actor, id: input.id })),
});
