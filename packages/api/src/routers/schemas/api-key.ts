// apiKey.* as the API returns them. The key itself is returned once, by create or rotate.
import { z } from "zod";
import { USER_ROLES } from "@mesh/db";

export const ApiKeyList = z.strictObject({
  items: z.array(
    z.strictObject({ id: z.string(), name: z.string(), role: z.enum(USER_ROLES), createdBy: z.string(), createdAt: z.date(), revokedAt: z.date().nullable() }),
  ),
});

export const IssuedApiKey = z.strictObject({
  id: z.string(),
  name: z.string(),
  role: z.enum(USER_ROLES),
  key: z.string().meta({ description: "Send as `Authorization: Bearer <key>` (shown once)." }),
});

export const ApiKeyRevoked = z.strictObject({ id: z.string(), revoked: z.boolean() });
