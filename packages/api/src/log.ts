// Structured logs (pino), one line per event. Secrets never reach a log: the
// redact list names the fields that could carry them.
import pino, { type Logger } from "pino";

export type { Logger };

export function createLogger(name = "mesh", level = process.env.MESH_LOG_LEVEL ?? "info"): Logger {
  return pino({
    name,
    level,
    redact: ["token", "password", "apiKey", "secret", "req.headers.authorization", "req.headers.cookie"],
  });
}
