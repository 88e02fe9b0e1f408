// apiKey.*: named API keys (admin or viewer); a key is returned once, by create or rotate.
import { z } from "zod";
import { adminProcedure, router } from "../trpc";
import { ApiKeyList, ApiKeyRevoked, IssuedApiKey } from "./schemas/api-key";
import { createApiKey, CreateApiKeyInput, listApiKeys, revokeApiKey, rotateApiKey } from "../services/api-keys";

const KeyId = z.strictObject({ id: z.string().regex(/^[a-z0-9]{8}$/) });

export const apiKeyRouter = router({
  list: adminProcedure
    .meta({ description: "The named API keys and their roles (never the keys themselves)." })
    .output(ApiKeyList)
    .query(({ ctx }) => listApiKeys(ctx)),
  create: adminProcedure
    .meta({ description: "Creates a named API key with a role (admin or viewer). The key is shown only here." })
    .input(CreateApiKeyInput)
    .output(IssuedApiKey)
    .mutation(({ ctx, input }) => createApiKey(ctx, { actor: ctx.actor, input })),
  rotate: adminProcedure
    .meta({ description: "Replaces a key's secret; the old one stops working at once. The new key is shown only here." })
    .input(KeyId)
    .output(IssuedApiKey)
    .mutation(({ ctx, input }) => rotateApiKey(ctx, { actor: ctx.actor, id: input.id })),
  revoke: adminProcedure
    .meta({ description: "Revokes an API key." })
    .input(KeyId)
    .output(ApiKeyRevoked)
    .mutation(({ ctx, input }) => revokeApiKey(ctx, { actor: ctx.actor, id: input.id })),
});
