import { z } from "zod";
import { adminProcedure, authedProcedure, router } from "../trpc";
import { CreatedToken, TokenPage, TokenRevoked } from "./schemas/token";
import { createToken, CreateTokenInput, listTokens, ListTokensInput, revokeToken } from "../services/tokens";

export const tokenRouter = router({
  create: adminProcedure
    .meta({
      description:
        "Issues an enrolment token (single use unless maxUses says more) and the exact commands that install mesh-host and enrol a machine with it. The token is shown only here.",
    })
    .input(CreateTokenInput.optional())
    .output(CreatedToken)
    .mutation(({ ctx, input }) => createToken(ctx, { actor: ctx.actor, publicUrl: ctx.publicUrl, tlsPin: ctx.tlsPin, input: input ?? {} })),
  list: authedProcedure
    .meta({ description: "The tokens issued, newest first, a page at a time: status (unused, used, expired, revoked) and the nodes that enrolled with each." })
    .input(ListTokensInput.optional())
    .output(TokenPage)
    .query(({ ctx, input }) => listTokens(ctx, input)),
  revoke: adminProcedure
    .meta({ description: "Takes back a token that is not used up: it enrols nothing more." })
    .input(z.strictObject({ id: z.string().regex(/^[a-z0-9]{6}$/) }))
    .output(TokenRevoked)
    .mutation(({ ctx, input }) => revokeToken(ctx, { actor: ctx.actor, id: input.id })),
});
