// What a user reads when a call fails: the server's message for a refusal, a
// plain sentence for anything unexpected. Never a stack trace.
import { DATABASE_UNAVAILABLE_TEXT } from "./database-unavailable";

export function errorMessage(err: unknown): string {
  const e = err as { message?: string; data?: { code?: string; zodIssues?: Array<{ path: string; message: string }> | null } } | null;
  const code = e?.data?.code;
  if (!e || code === "INTERNAL_SERVER_ERROR" || !e.message) return "Something went wrong on the control plane. Try again; if it persists, check its log.";
  if (e.data?.zodIssues?.length) return e.data.zodIssues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");
  if (/fetch|network/i.test(e.message) && !code) return "The control plane cannot be reached right now.";
  if (code === "SERVICE_UNAVAILABLE" && /database/i.test(e.message)) return DATABASE_UNAVAILABLE_TEXT;
  if (code === "UNAUTHORIZED") return "Your session has ended: log in again.";
  return e.message;
}
