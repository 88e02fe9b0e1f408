// Which driver errors mean "the database cannot answer now" (down, unreachable, restarting, out of
// time) rather than "this query is wrong": the first are worth a 503 and a retry, never a stack.
import { NO_RESPONSE } from "./response-deadline";

/** postgres.js's own codes for a connection that failed, and ours for one that fell silent. */
const DRIVER_CODES = new Set(["CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", NO_RESPONSE]);

/** Socket and name-lookup failures. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ECONNABORTED", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * Server refusals of the same kind: connection exceptions (class 08), shutting down, starting up,
 * out of connections, and the statement or idle-in-transaction deadlines.
 */
const SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "57014", "25P03"]);

export function isDatabaseUnreachable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const stack: unknown[] = [err];
  while (stack.length) {
    const e = stack.pop();
    if (!e || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (DRIVER_CODES.has(code) || SOCKET_CODES.has(code) || SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    // Drizzle wraps driver errors (with the SQL in its message); tRPC wraps ours; Node aggregates per-address failures.
    stack.push((e as { cause?: unknown }).cause);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) stack.push(...errors);
  }
  return false;
}
