// The name rule shared by users and named API keys. Each acts in the audit trail
// under its kind's prefix (`user:`, `key:`), and no name can contain that `:`.
import { z } from "zod";

export const CallerName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits, '.', '_' and '-'");
