// The name rule shared by users and named API keys: each becomes a Caller's name
// in the audit trail, so both take the same lower-case form.
import { z } from "zod";

export const CallerName = z.string().min(1).max(64).regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits, '.', '_' and '-'");
