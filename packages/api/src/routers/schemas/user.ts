// user.* as the API returns them: dashboard users and who the caller is.
import { z } from "zod";
import { USER_ROLES } from "@mesh/db";

export const Caller = z.strictObject({
  name: z.string().meta({ description: "The user's own name when logged in, else the actor (`key:<name>`, `api-key`)." }),
  actor: z.string(),
  role: z.enum(USER_ROLES),
  hasPassword: z.boolean().meta({ description: "A logged-in user has a password to change; an API key does not." }),
});

export const UserList = z.strictObject({
  items: z.array(
    z.strictObject({ id: z.string(), name: z.string(), role: z.enum(USER_ROLES), createdBy: z.string(), createdAt: z.date(), revokedAt: z.date().nullable() }),
  ),
});

export const CreatedUser = z.strictObject({ id: z.string(), name: z.string(), role: z.enum(USER_ROLES) });

export const PasswordChanged = z.strictObject({ changed: z.boolean(), sessionsEnded: z.number().int() });

export const PasswordSet = PasswordChanged.extend({ id: z.string() });

export const UserRevoked = z.strictObject({ id: z.string(), revoked: z.boolean() });
