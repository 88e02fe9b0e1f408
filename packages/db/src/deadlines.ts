// How long the control plane waits for its database: to connect, for a statement, for a
// transaction left idle, and for any answer at all on a connection whose packets are dropped.
import { responseDeadlineSocket } from "./response-deadline";

export interface DatabaseDeadlines {
  /** TCP connect plus start-up (authentication) until the server is ready for a query. */
  connectTimeoutMs: number;
  /** Server-side: a statement running longer is cancelled (SQLSTATE 57014). 0: none. */
  statementTimeoutMs: number;
  /** Server-side: a session idle inside a transaction this long is ended, releasing its locks. 0: none. */
  idleInTransactionTimeoutMs: number;
  /** A pooled connection idle this long is closed (and reopened on demand). */
  idleConnectionTimeoutMs: number;
  /**
   * Client-side: a connection owing an answer that receives no byte for this long is destroyed
   * and its queries fail (packets dropped, not refused: the server cannot cancel what it never
   * receives). Longer than the statement timeout, so a slow statement is cancelled by the server first.
   */
  responseTimeoutMs: number;
}

/** What a request waits past the statement timeout before the connection is taken for dead. */
export const RESPONSE_GRACE_MS = 5_000;

export const DEFAULT_DEADLINES: DatabaseDeadlines = {
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 30_000,
  idleConnectionTimeoutMs: 60_000,
  responseTimeoutMs: 15_000 + RESPONSE_GRACE_MS,
};

/** The defaults with the caller's choices; the response deadline follows the statement timeout unless given. */
export function resolveDeadlines(given: Partial<DatabaseDeadlines> = {}): DatabaseDeadlines {
  const statementTimeoutMs = given.statementTimeoutMs ?? DEFAULT_DEADLINES.statementTimeoutMs;
  return {
    ...DEFAULT_DEADLINES,
    ...given,
    statementTimeoutMs,
    responseTimeoutMs: given.responseTimeoutMs ?? (statementTimeoutMs > 0 ? statementTimeoutMs : DEFAULT_DEADLINES.statementTimeoutMs) + RESPONSE_GRACE_MS,
  };
}

/**
 * Server settings sent in the start-up message (no extra round trip). Values are strings:
 * postgres.js leaves out falsy ones, and "0" (none) must still be sent.
 */
export function sessionSettings(deadlines: Pick<DatabaseDeadlines, "statementTimeoutMs" | "idleInTransactionTimeoutMs">): Record<string, string> {
  return {
    statement_timeout: String(deadlines.statementTimeoutMs),
    idle_in_transaction_session_timeout: String(deadlines.idleInTransactionTimeoutMs),
  };
}

/**
 * The postgres.js options that carry the deadlines, for every client the control plane opens on a
 * Postgres (its own database, a grant provider's): connect and idle by the driver, statement and
 * idle-in-transaction by the server, silence by the socket.
 */
export function postgresDeadlineOptions(url: string, deadlines: DatabaseDeadlines) {
  return {
    connect_timeout: deadlines.connectTimeoutMs / 1000,
    idle_timeout: deadlines.idleConnectionTimeoutMs / 1000,
    connection: sessionSettings(deadlines),
    // Plain TCP only: over TLS postgres.js wraps the socket, and the protocol is not readable under it.
    ...(deadlines.responseTimeoutMs > 0 && !wantsTls(url) ? { socket: responseDeadlineSocket({ responseTimeoutMs: deadlines.responseTimeoutMs }) } : {}),
  };
}

function wantsTls(url: string): boolean {
  const params = new URL(url).searchParams;
  const mode = params.get("sslmode") ?? params.get("ssl");
  return !!mode && mode !== "disable" && mode !== "false";
}
