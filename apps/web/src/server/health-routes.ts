// GET /healthz and /readyz, served by the server entry before Next (for load balancers and systemd).
// /healthz: the process answers; no database call. /readyz: the database answers within a short
// deadline, this instance's migrations are done and its change-bus subscription is up; otherwise 503
// with a JSON reason. Concurrent probes share one check, and a result is reused for a second, so a
// probe storm against a database that hangs holds at most one pool connection.
import type { IncomingMessage, ServerResponse } from "node:http";
import { sql } from "drizzle-orm";
import type { Db } from "@mesh/db";

export const HEALTHZ_PATH = "/healthz";
export const READYZ_PATH = "/readyz";
export const READY_DEADLINE_MS = 2_000;
const REUSE_MS = 1_000;

export interface Readiness {
  db: Db;
  /** Set once migrate() has finished at start. */
  migrated: () => boolean;
  /** The change bus round trip within the deadline: "ok", or why not (bus-probe.ts). */
  bus: (deadlineMs: number) => Promise<string>;
  deadlineMs?: number;
}

interface Verdict {
  ready: boolean;
  checks: { database: "ok" | string; migrations: "ok" | "pending"; bus: "ok" | string };
  reason?: string;
}

async function databaseAnswers(db: Db, deadlineMs: number): Promise<"ok" | string> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no answer within ${deadlineMs} ms`), deadlineMs)));
  try {
    return await Promise.race([db.execute(sql`select 1`).then(() => "ok" as const), deadline]);
  } catch (err) {
    return `unreachable: ${((err as Error).message || String(err)).slice(0, 200)}`;
  } finally {
    clearTimeout(timer);
  }
}

export function readinessProbe(r: Readiness) {
  let last: { at: number; verdict: Verdict } | null = null;
  let inFlight: Promise<Verdict> | null = null;
  return async function check(): Promise<Verdict> {
    if (last && Date.now() - last.at < REUSE_MS) return last.verdict;
    inFlight ??= (async () => {
      const deadlineMs = r.deadlineMs ?? READY_DEADLINE_MS;
      const [database, bus] = await Promise.all([databaseAnswers(r.db, deadlineMs), r.bus(deadlineMs)]);
      const checks: Verdict["checks"] = { database, migrations: r.migrated() ? "ok" : "pending", bus };
      const failing = Object.entries(checks).filter(([, v]) => v !== "ok");
      const verdict: Verdict =
        failing.length === 0 ? { ready: true, checks } : { ready: false, checks, reason: failing.map(([k, v]) => `${k}: ${v}`).join("; ") };
      last = { at: Date.now(), verdict };
      return verdict;
    })().finally(() => (inFlight = null));
    return inFlight;
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
}

/** Answers the probe paths; false when the request is for another path. */
export function serveHealth(req: IncomingMessage, res: ServerResponse, pathname: string, ready: () => Promise<Verdict>): boolean {
  if (pathname !== HEALTHZ_PATH && pathname !== READYZ_PATH) return false;
  if (req.method !== "GET" && req.method !== "HEAD") {
    json(res, 405, { error: "METHOD_NOT_ALLOWED", message: "use GET" });
    return true;
  }
  if (pathname === HEALTHZ_PATH) {
    json(res, 200, { status: "ok" });
    return true;
  }
  ready().then(
    (v) => json(res, v.ready ? 200 : 503, v.ready ? { status: "ready", checks: v.checks } : { status: "not ready", reason: v.reason, checks: v.checks }),
    (err) => json(res, 503, { status: "not ready", reason: String((err as Error).message) }),
  );
  return true;
}
