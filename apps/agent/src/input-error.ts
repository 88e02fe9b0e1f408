// Turns a zod failure into the line an operator needs: which field, what is wrong,
// so that bad input exits 2 with a message naming it.
import type { z } from "zod";

export function describeIssues(error: z.ZodError, limit = 3): string {
  const lines = error.issues.slice(0, limit).map((issue) => {
    const where = issue.path.length ? issue.path.join(".") : "(top level)";
    return `${where}: ${issue.message}`;
  });
  if (error.issues.length > limit) lines.push(`and ${error.issues.length - limit} more`);
  return lines.join("; ");
}
