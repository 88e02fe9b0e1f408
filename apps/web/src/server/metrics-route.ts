// GET /metrics: Prometheus text from the registry packages/api's counters live in. Never public by
// default: on the main port only with MESH_METRICS_TOKEN (Authorization: Bearer, compared in constant
// time), and on MESH_METRICS_ADDRESS (a separate listener, e.g. 127.0.0.1:9464) to whoever reaches it.
import http from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, timingSafeEqual } from "node:crypto";
import { fleetFigures, metrics, type Deps, type Logger } from "@mesh/api";

export const METRICS_PATH = "/metrics";

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? "");
  if (!m) return false;
  const a = createHash("sha256").update(m[1]!).digest();
  const b = createHash("sha256").update(token).digest();
  return timingSafeEqual(a, b);
}

export function metricsHandler(deps: Pick<Deps, "db">, log: Logger) {
  const refresh = fleetFigures(deps);
  return async (_req: IncomingMessage, res: ServerResponse) => {
    try {
      // A database that cannot answer leaves the fleet figures as they were; the rest is still served.
      await refresh().catch((err) => log.warn({ err: (err as Error).message }, "metrics: fleet figures not refreshed"));
      const body = await metrics.registry.metrics();
      res.writeHead(200, { "content-type": metrics.registry.contentType, "cache-control": "no-store" }).end(body);
    } catch (err) {
      log.error({ err }, "metrics failed");
      if (!res.headersSent) res.writeHead(500).end();
    }
  };
}

/** On the main port: only with a token, and only to a caller bearing it. False when not for /metrics. */
export function serveMetricsOnMainPort(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  token: string | undefined,
  handler: ReturnType<typeof metricsHandler>,
): boolean {
  if (pathname !== METRICS_PATH || !token) return false;
  if (!bearerMatches(req.headers.authorization, token)) {
    res
      .writeHead(401, { "content-type": "application/json", "www-authenticate": 'Bearer realm="metrics"' })
      .end(JSON.stringify({ error: "UNAUTHORIZED", message: "metrics need Authorization: Bearer <MESH_METRICS_TOKEN>" }));
    return true;
  }
  void handler(req, res);
  return true;
}

/** A listener serving only /metrics (and a token check too when one is set), on its own address. */
export async function listenMetrics(
  address: { host: string; port: number },
  token: string | undefined,
  handler: ReturnType<typeof metricsHandler>,
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? "/").split("?")[0];
    if (pathname !== METRICS_PATH || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "NOT_FOUND", message: "this listener serves GET /metrics only" }));
      return;
    }
    if (token && !bearerMatches(req.headers.authorization, token)) {
      res.writeHead(401, { "www-authenticate": 'Bearer realm="metrics"' }).end();
      return;
    }
    void handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => resolve());
  });
  return server;
}
