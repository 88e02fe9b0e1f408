import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { CreatedToken, TokenPage, TokenRevoked } from "./schemas/token";
import { createToken, CreateTokenInput } from "../services/create-token";
import { listTokens, ListTokensInput, revokeToken } from "../services/tokens";

export const tokenRouter = router({
  create: adminProcedure
    .input(CreateTokenInput.optional())
    .output(CreatedToken)
    .mutation(({ ctx, input }) => createToken(ctx, { actor: ctx.actor, publicUrl: ctx.publicUrl, tlsPin: ctx.tlsPin, input: input ?? {} })),
  list: authedProcedure.input(ListTokensInput.optional()).output(TokenPage).query(({ ctx, input }) => listTokens(ctx, input)),
  revoke: adminProcedure.input(z.strictObject({ id: z.string().regex(/^[a-z0-9]{6}$/) })).output(TokenRevoked).mutation(({ ctx, input }) => revokeToken(ctx, { actor: ctx.actor, id: input.id })),
});
