// The one server entry: Next.js (dashboard + tRPC + enrol), and the agent gateway,
// on one port, over exactly one database instance per process.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { fileURLToPath } from "node:url";
import next from "next";
import { createDb } from "@mesh/db";
import { migrate, lockDataDir, DataDirLockedError, makeDataDirPrivate, DataDirOpenError } from "@mesh/db/migrate";
import { createEnrolLimits, createLoginLimits, createLogger, createPostgresGrantProvider, ensureAdminCredentials, type Grants } from "@mesh/api";
import { createAptRepository, missingToolsMessage, loadSecretKey, openSecrets, SecretKeyError, startGrantSettler } from "@mesh/api";
import { createGateway, type Gateway } from "@mesh/api/gateway";
import { CHALLENGE_PATH } from "@mesh/protocol";
import { loadConfig } from "./server/config";
import { limitConnections } from "./server/connection-limits";
import { raiseOpenFileLimit, socketBudget } from "./server/open-file-limit";
import { admitRequest } from "./server/request-edge";
import { ENROL_PATH, serveEnrol } from "./server/enrol-route";
import { untrustedForwardingWarning } from "./server/untrusted-forwarding";
import { ORIGIN_HEADER, setLocalPush, setRuntime } from "./server/runtime";
import { applyHsts } from "./server/security-headers";
import { loadTls } from "./server/tls";
import { TrustedProxies } from "./server/trusted-proxies";
import { upgradeListener } from "./server/upgrades";
import { startBusProbe } from "./server/bus-probe";
import { readinessProbe, serveHealth } from "./server/health-routes";
import { listenMetrics, metricsHandler, serveMetricsOnMainPort } from "./server/metrics-route";
import { startAlertWorker, startRolloutWorker } from "@mesh/api";

process.env.NEXT_TELEMETRY_DISABLED = "1";
const dev = process.argv.includes("--dev");
/** Connections the kernel may hold completed before we accept them (capped by net.core.somaxconn). */
const LISTEN_BACKLOG = 8192;
const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

async function main() {
  // Everything this process writes (data directory, key files, TLS pairs) is for its own user only.
  process.umask(0o077);
  const log = createLogger("mesh");
  const openFiles = raiseOpenFileLimit();
  let config;
  try {
    config = loadConfig(process.env, process.env.INIT_CWD ?? process.cwd());
  } catch (err) {
    console.error(`mesh: bad configuration: ${(err as Error).message}`);
    process.exit(2);
  }
  config = config!;

  let releaseLock = () => {};
  // On Postgres the data directory may still hold the secret key and a TLS key.
  if (!config.databaseUrl || fs.existsSync(config.dataDir)) {
    try {
      makeDataDirPrivate(config.dataDir);
      if (!config.databaseUrl) releaseLock = lockDataDir(config.dataDir);
    } catch (err) {
      if (err instanceof DataDirLockedError || err instanceof DataDirOpenError) {
        console.error(`mesh: ${err.message}`);
        process.exit(1);
      }
      throw err;
    }
  }

  const database = await createDb({
    ...(config.databaseUrl
      ? { url: config.databaseUrl, deadlines: config.databaseDeadlines, onNotice: (m: string) => log.debug({ notice: m }, "postgres notice") }
      : { dataDir: path.join(config.dataDir, "pglite") }),
    busUrl: config.busUrl,
    onBusError: (message) => log.warn({ bus: "nats" }, message),
  });
  await migrate(database);
  let migrated = true;
  // Again now that PGlite has written its own files (0666 on a new directory).
  if (!config.databaseUrl) makeDataDirPrivate(config.dataDir);
  log.info({ database: database.kind, bus: config.busUrl ? "nats" : "notify", dataDir: config.databaseUrl ? undefined : config.dataDir }, "database ready");

  const generated = await ensureAdminCredentials(database.db, { password: config.adminPassword, apiKey: config.adminApiKey });
  if (generated.password || generated.apiKey) {
    // Printed once, to the terminal: only hashes are stored.
    const lines = ["", "Mesh: first start. Keep these; they are not shown again."];
    if (generated.password) lines.push(`  dashboard login: user admin, password ${generated.password}`);
    if (generated.apiKey) lines.push(`  admin API key (Authorization: Bearer ...): ${generated.apiKey}`);
    console.log(lines.join("\n") + "\n");
  }

  let secrets;
  try {
    // Without the statement deadline: it may seal every grant and VACUUM FULL two tables, once.
    const secretKey = loadSecretKey({ envKey: config.secretKey, dataDir: config.dataDir });
    const opened = await database.withoutDeadlines((unbounded) => openSecrets(unbounded.db, secretKey));
    if (opened.sealed > 0) log.info({ sealed: opened.sealed }, "sealed grant secrets stored in clear by an older version");
    secrets = opened.box;
  } catch (err) {
    if (!(err instanceof SecretKeyError)) throw err;
    console.error(`mesh: ${err.message}`);
    process.exit(1);
  }
  const postgresGrants = config.grantPostgresUrl
    ? createPostgresGrantProvider(config.grantPostgresUrl, { publicUrl: config.grantPostgresPublicUrl, deadlines: config.databaseDeadlines })
    : null;
  const grants: Grants = { providers: postgresGrants ? { postgres: postgresGrants } : {}, secrets };
  const stopSettler = postgresGrants ? await startGrantSettler({ db: database.db, log, grants }, database.bus) : async () => {};
  const tls = loadTls({ ...config.tls, selfSignedDir: config.tls.selfSigned ? path.join(config.dataDir, "tls") : undefined });
  if (tls) log.info({ pin: tls.pin }, "serving TLS");
  const hostVersion = (JSON.parse(fs.readFileSync(path.resolve(webDir, "../agent/package.json"), "utf8")) as { version: string }).version;
  // Built (and its key made) in the background now, and again only when its .debs change.
  const apt = createAptRepository({ dataDir: config.dataDir, artifactsDir: config.artifactsDir, signingKeyFile: config.aptSigningKeyFile, log });
  if (config.role !== "gateway") {
    const { missing } = apt.status();
    if (missing.programs.length > 0) log.warn({ missing: missing.programs }, `${missingToolsMessage(missing)}; /apt answers 503 until then`);
    else void apt.prepare();
  }
  setRuntime({
    database,
    log,
    config,
    grants,
    tlsPin: tls?.pin,
    hostVersion,
    apt,
    enrolLimits: createEnrolLimits(config.enrolLimitPerAddress, config.enrolLimitPerToken),
    loginLimits: createLoginLimits(),
  });

  // Readiness: the database answers, and this instance hears its own notification back on the change bus.
  const busProbe = await startBusProbe(database.db, database.bus);
  const ready = readinessProbe({ db: database.db, migrated: () => migrated, bus: (ms) => busProbe.check(ms) });
  const serveMetrics = metricsHandler({ db: database.db }, log);
  const metricsServer = config.metrics.address ? await listenMetrics(config.metrics.address, config.metrics.token, serveMetrics) : null;
  if (metricsServer) log.info({ address: config.metrics.address }, "metrics listener");
  // Every instance delivers alerts; the evaluation runs once per control plane (alerts/evaluate-alerts.ts).
  const stopAlerts = startAlertWorker({ db: database.db, log, grants }, config.alerts);
  // Every instance ticks; the one holding the rollout lease runs the staged rollouts (rollouts/lease.ts).
  const rolloutWorker = startRolloutWorker({ db: database.db, log, grants }, config.rollouts);

  let gateway: Gateway | null = null;
  if (config.role !== "web") {
    gateway = await createGateway({
      deps: { db: database.db, log, grants },
      bus: database.bus,
      pingIntervalMs: config.pingIntervalMs,
      lastCheckedFlushMs: config.lastCheckedFlushMs,
      heartbeatMs: config.gatewayHeartbeatMs,
      staleMs: config.gatewayStaleMs,
      connectsPerMinute: config.linkConnectsPerMinute,
      admissionsPerSecond: config.linkAdmissionsPerSecond,
      admissionsPerAddressPerSecond: config.linkAdmissionsPerAddressPerSecond,
      handshakesInFlight: config.linkHandshakesInFlight,
      handshakesInFlightPerAddress: config.linkHandshakesInFlightPerAddress,
    });
    // A role save made here sends its frames to this gateway's links right after commit. MESH_LOCAL_PUSH=0
    // leaves them to the notification's path alone (the fleet bench compares the two on one build).
    if (process.env.MESH_LOCAL_PUSH !== "0") setLocalPush(gateway.localPush);
  }

  const app = next({ dev, dir: webDir, hostname: "localhost", port: config.port, turbopack: dev });
  const handle = app.getRequestHandler();
  if (config.role !== "gateway") await app.prepare();

  const proxies = new TrustedProxies(config.trustedProxies);
  const warnUntrustedForwarding = untrustedForwardingWarning(proxies, log);
  const servedOverHttps = !!tls || !!config.publicUrl?.startsWith("https://");
  const listener: http.RequestListener = (req, res) => {
    warnUntrustedForwarding(req);
    if (!admitRequest(req, res, { dev, tls: !!tls, servedOverHttps, proxies })) return;
    // The validated origin's scheme: https behind a trusted TLS-terminating proxy gets HSTS too.
    applyHsts(res, String(req.headers[ORIGIN_HEADER]));
    const pathname = (req.url ?? "/").split("?")[0]!;
    if (serveHealth(req, res, pathname, ready)) return;
    if (serveMetricsOnMainPort(req, res, pathname, config.metrics.token, serveMetrics)) return;
    if (gateway && pathname === CHALLENGE_PATH && req.method === "GET") return gateway.handleChallenge(req, res);
    if (config.role === "gateway") {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: "NOT_FOUND", message: "this instance only serves the agent gateway" }));
      return;
    }
    // Enrolment is a fast path: straight to its fetch handler, not through Next's router.
    if (pathname === ENROL_PATH && req.method === "POST") {
      serveEnrol(req, res).catch((err) => {
        log.error({ err }, "enrolment request failed");
        if (!res.headersSent) res.writeHead(500).end();
      });
      return;
    }
    handle(req, res).catch((err) => {
      log.error({ err }, "request failed");
      if (!res.headersSent) res.writeHead(500).end();
    });
  };
  const server = tls
    ? https.createServer({ cert: tls.cert, key: tls.key, handshakeTimeout: config.connections.headersTimeoutMs }, listener)
    : http.createServer(listener);
  // Longer than the idle timeouts of clients and load balancers, so none reuses a
  // connection at the instant the server closes it.
  server.keepAliveTimeout = 65_000;
  // Counted now that the database, Next and the gateway hold their own files.
  const sockets = socketBudget(openFiles);
  if (openFiles) log.info({ soft: openFiles.soft, hard: openFiles.hard, raised: openFiles.raised, socketBudget: sockets }, "open-file limit");
  const limits = limitConnections(server, { ...config.connections, socketBudget: sockets, tls: !!tls, proxies, log });
  server.on(
    "upgrade",
    upgradeListener({
      dev,
      gateway,
      limits,
      clientAddress: (req) => proxies.clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"] as string | undefined),
    }),
  );

  await new Promise<void>((resolve) => {
    server.on("error", (err: NodeJS.ErrnoException) => {
      if (server.listening) {
        // Running out of descriptors is counted and logged by limitConnections.
        if (err.code !== "EMFILE" && err.code !== "ENFILE") log.error({ err }, "server error");
        return;
      }
      // A control plane that serves nothing must not stay up holding the data directory's lock:
      // exiting is what frees it (the kernel drops the lock with the process).
      console.error(`mesh: cannot listen on ${config.host}:${config.port} (${err.code ?? err.message}); stop what holds the port or set PORT to another one`);
      process.exit(1);
    });
    // A restarted control plane meets its whole fleet at once. Node's default accept queue (511)
    // overflows then, and a connection the kernel completed but the queue had no room for loses its
    // request until TCP gives up: 3,312 challenge timeouts (15 s each, then a backoff window of up to
    // 30 s) in a 10,000-host restart (decision 0020). The kernel caps this at net.core.somaxconn.
    server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  log.info({ port, role: config.role, gatewayId: gateway?.id }, "control plane listening");
  console.log(`Mesh control plane on ${tls ? "https" : "http"}://localhost:${port} (${database.kind}${config.databaseUrl ? "" : ` in ${config.dataDir}`})`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping");
    server.close();
    server.closeAllConnections();
    migrated = false;
    metricsServer?.close();
    await stopAlerts().catch(() => {});
    await rolloutWorker.stop().catch(() => {});
    await apt.close().catch(() => {});
    await busProbe.close().catch(() => {});
    await gateway?.close().catch(() => {});
    await stopSettler().catch(() => {});
    await postgresGrants?.close().catch(() => {});
    await database.close().catch(() => {});
    releaseLock();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err) => {
  console.error("mesh: failed to start:", err);
  process.exit(1);
});
