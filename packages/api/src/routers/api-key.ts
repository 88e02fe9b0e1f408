// apiKey.*: named API keys (admin or viewer); a key is returned once, by create or rotate.
import { z } from "zod";
import { adminProcedure, router } from "../trpc";
import { ApiKeyList, ApiKeyRevoked, IssuedApiKey } from "./schemas/api-key";
import { createApiKey, CreateApiKeyInput, listApiKeys, revokeApiKey, rotateApiKey } from "../services/api-keys";

const KeyId = z.strictObject({ id: z.string().regex(/^[a-z0-9]{8}$/) });

export const apiKeyRouter = router({
  list: adminProcedure.output(ApiKeyList).query(({ ctx }) => listApiKeys(ctx)),
  create: adminProcedure.input(CreateApiKeyInput).output(IssuedApiKey).mutation(({ ctx, input }) => createApiKey(ctx, { actor: ctx.actor, input })),
  rotate: adminProcedure.input(KeyId).output(IssuedApiKey).mutation(({ ctx, input }) => rotateApiKey(ctx, { actor: ctx.actor, id: input.id })),
  revoke: adminProcedure.input(KeyId).output(ApiKeyRevoked).mutation(({ ctx, input }) => revokeApiKey(ctx, { actor: ctx.actor, id: input.id })),
});
