// Structured logs: one JSON line per event on stderr, level from MESH_LOG_LEVEL.
// Secrets never reach a log: the known secret fields are redacted as a backstop.
import pino from "pino";

export type Logger = pino.Logger;

const LEVELS = new Set(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

export function createLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const wanted = (env.MESH_LOG_LEVEL ?? "info").toLowerCase();
  return pino(
    {
      level: LEVELS.has(wanted) ? wanted : "info",
      base: { pid: process.pid },
      redact: { paths: ["token", "privateKey", "*.token", "*.privateKey", "signature", "*.signature"], censor: "[secret]" },
    },
    // Synchronous on stderr so the last lines before an exit are not lost.
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything, for tests and quiet commands. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
