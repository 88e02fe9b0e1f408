// One line that names every bad field of a zod error, for refusals sent to users.
import type { z } from "zod";

export function describeZodError(error: z.ZodError, max = 5): string {
  const parts = error.issues.slice(0, max).map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
  if (error.issues.length > max) parts.push(`and ${error.issues.length - max} more`);
  return parts.join("; ");
}
