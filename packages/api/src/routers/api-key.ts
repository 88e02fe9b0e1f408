// apiKey.*: named API keys (admin or viewer); a key is returned once by create.
import { z } from "zod";
import { adminProcedure, router } from "../trpc";
import { createApiKey, CreateApiKeyInput, listApiKeys, revokeApiKey } from "../services/api-keys";

export const apiKeyRouter = router({
  list: adminProcedure.query(({ ctx }) => listApiKeys(ctx)),
  create: adminProcedure.input(CreateApiKeyInput).mutation(({ ctx, input }) => createApiKey(ctx, { actor: ctx.actor, input })),
  revoke: adminProcedure.input(z.strictObject({ id: z.string().regex(/^[a-z0-9]{8}$/) })).mutation(({ ctx, input }) => revokeApiKey(ctx, { actor: ctx.actor, id: input.id })),
});
