// The control plane's settings, read once from the environment and checked.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { isAddressOrCidr } from "./trusted-proxies";
import type { ConnectionLimitOptions } from "./connection-limits";
import type { DatabaseDeadlines } from "@mesh/db";

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  DATABASE_URL: z.string().url().optional(),
  /** Database deadlines (packages/db deadlines.ts has the defaults and why; decision 0023). */
  MESH_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).optional(),
  MESH_DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).optional(),
  MESH_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(0).optional(),
  MESH_DATA_DIR: z.string().default(".mesh"),
  MESH_ROLE: z.enum(["all", "web", "gateway"]).default("all"),
  MESH_BUS_URL: z
    .string()
    .url()
    .refine((u) => new URL(u).protocol === "nats:", "MESH_BUS_URL must be nats://host:port")
    .optional(),
  MESH_PUBLIC_URL: z.string().url().optional(),
  MESH_ADMIN_PASSWORD: z.string().min(8, "MESH_ADMIN_PASSWORD must have at least 8 characters").optional(),
  MESH_ADMIN_API_KEY: z.string().min(16, "MESH_ADMIN_API_KEY must have at least 16 characters").optional(),
  MESH_PING_INTERVAL_MS: z.coerce.number().int().min(100).default(15_000),
  /** How often a gateway writes "last checked" for nodes whose reports came unchanged (one statement for all). */
  MESH_LAST_CHECKED_FLUSH_MS: z.coerce.number().int().min(100).default(60_000),
  MESH_GATEWAY_HEARTBEAT_MS: z.coerce.number().int().min(100).default(5_000),
  /** Silence after which another gateway is taken for dead (unset: max(6 beats, 30 s)). */
  MESH_GATEWAY_STALE_MS: z.coerce.number().int().min(1_000).optional(),
  MESH_LINK_CONNECTS_PER_MINUTE: z.coerce.number().int().min(1).default(10),
  /** Link handshakes the gateway starts per second (unset: the gateway's default, admission.ts). */
  MESH_LINK_ADMISSIONS_PER_SECOND: z.coerce.number().int().min(1).optional(),
  MESH_LINK_ADMISSIONS_PER_ADDRESS_PER_SECOND: z.coerce.number().int().min(1).optional(),
  /** Link handshakes in flight (challenge issued, upgrade not yet settled) at most (unset: the gateway's default, admission.ts). */
  MESH_LINK_HANDSHAKES_IN_FLIGHT: z.coerce.number().int().min(1).optional(),
  MESH_LINK_HANDSHAKES_IN_FLIGHT_PER_ADDRESS: z.coerce.number().int().min(1).optional(),
  MESH_ARTIFACTS_DIR: z.string().optional(),
  /**
   * An armored OpenPGP secret key (no passphrase) that signs the apt repository at /apt; unset: one made
   * once with gpg in MESH_DATA_DIR/apt/gnupg. Instances behind one URL must sign with the same key:
   * give them all this file, or one shared data directory (decision 0045).
   */
  MESH_APT_SIGNING_KEY_FILE: z.string().optional(),
  MESH_BOOTSTRAP_SECRET_FILE: z.string().optional(),
  MESH_TLS_CERT: z.string().optional(),
  MESH_TLS_KEY: z.string().optional(),
  MESH_TLS: z.enum(["off", "self-signed"]).default("off"),
  MESH_GRANT_POSTGRES_URL: z.string().url().optional(),
  MESH_GRANT_POSTGRES_PUBLIC_URL: z.string().url().optional(),
  MESH_SECRET_KEY: z.string().optional(),
  MESH_ENROL_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).default(30),
  MESH_ENROL_LIMIT_PER_TOKEN: z.coerce.number().int().min(1).default(10),
  MESH_TRUSTED_PROXIES: z.string().optional(),
  MESH_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(16_384),
  MESH_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).default(1024),
  MESH_MAX_PENDING_HANDSHAKES: z.coerce.number().int().min(1).default(512),
  MESH_MAX_PENDING_HANDSHAKES_PER_ADDRESS: z.coerce.number().int().min(1).default(64),
  MESH_HANDSHAKE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  MESH_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
  MESH_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(300_000),
  /** /metrics on the main port, to callers bearing this token (unset: not served there). */
  MESH_METRICS_TOKEN: z.string().min(16, "MESH_METRICS_TOKEN must have at least 16 characters").max(512).optional(),
  /** host:port of a separate listener serving only /metrics (e.g. 127.0.0.1:9464). */
  MESH_METRICS_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):\d{1,5}$/, "MESH_METRICS_ADDRESS must be host:port (e.g. 127.0.0.1:9464)")
    .optional(),
  /** How often each instance evaluates alerts and delivers what is due. */
  MESH_ALERT_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  /** The first retry's delay of a failed webhook delivery (then doubling, at most an hour). */
  MESH_ALERT_RETRY_BASE_MS: z.coerce.number().int().min(100).default(10_000),
  /** How often each instance ticks the rollout worker (only the lease holder advances rollouts). */
  MESH_ROLLOUT_INTERVAL_MS: z.coerce.number().int().min(100).default(2_000),
  /** How long the rollout lease lasts unrenewed: a dead holder's rollouts resume elsewhere after this. */
  MESH_ROLLOUT_LEASE_MS: z.coerce.number().int().min(1_000).default(15_000),
});

export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
  /** What the Postgres driver waits for (unset: the defaults); PGlite honours none. */
  databaseDeadlines: Partial<DatabaseDeadlines>;
  dataDir: string;
  role: "all" | "web" | "gateway";
  /** nats://host:port: the change bus on NATS; unset: LISTEN/NOTIFY on the database (decision 0016). */
  busUrl?: string;
  publicUrl?: string;
  adminPassword?: string;
  adminApiKey?: string;
  pingIntervalMs: number;
  lastCheckedFlushMs: number;
  /**
   * How often a gateway instance beats in the gateways table; another instance sweeps it as dead
   * (and releases its nodes) after max(6 beats, 30 s) of silence (decision 0017).
   */
  gatewayHeartbeatMs: number;
  gatewayStaleMs?: number;
  /** Authenticated link connects one node may make per minute (per gateway instance); past it 503 + Retry-After. */
  linkConnectsPerMinute: number;
  linkAdmissionsPerSecond?: number;
  /** What one client address may start of those per second (default a quarter; set it to the rate behind one balancer address). */
  linkAdmissionsPerAddressPerSecond?: number;
  linkHandshakesInFlight?: number;
  linkHandshakesInFlightPerAddress?: number;
  /** The first node's one-time secret (decision 0008); unset: no bootstrap endpoint. */
  bootstrapSecretFile?: string;
  /** Where `npm run package` put the host's artifacts, served at /download. */
  artifactsDir: string;
  /** The apt repository's signing key file (armored secret key); unset: made once in the data directory. */
  aptSigningKeyFile?: string;
  /** TLS: certificate and key files, or a self-signed pair kept in the data directory. */
  tls: { certPath?: string; keyPath?: string; selfSigned: boolean };
  /** Admin URL of the database Postgres grants are made on; none means no grants. */
  grantPostgresUrl?: string;
  /** The same database as hosts reach it, when that differs. */
  grantPostgresPublicUrl?: string;
  /** Base64 of 32 bytes sealing grant secrets at rest; unset: a key file in the data directory (decision 0011). */
  secretKey?: string;
  /** Failed enrolments allowed per address, and per token and address, before the backoff starts. */
  enrolLimitPerAddress: number;
  enrolLimitPerToken: number;
  /** Peers whose X-Forwarded-For/-Host/-Proto are believed (addresses or CIDRs); none by default. */
  trustedProxies: string[];
  /** What one remote address, and everyone together, may hold open (decision 0012). */
  connections: ConnectionLimitOptions;
  /** /metrics: a bearer token for the main port, and/or a separate listener (never public by default). */
  metrics: { token?: string; address?: { host: string; port: number } };
  alerts: { intervalMs: number; retryBaseMs: number };
  rollouts: { intervalMs: number; leaseMs: number };
}

function hostPort(value: string): { host: string; port: number } {
  const i = value.lastIndexOf(":");
  const port = Number(value.slice(i + 1));
  if (port > 65535) throw new Error(`MESH_METRICS_ADDRESS: port ${port} is over 65535`);
  return { host: value.slice(0, i).replace(/^\[(.*)\]$/, "$1"), port };
}

export function loadConfig(env: NodeJS.ProcessEnv, cwd = process.cwd()): Config {
  const e = Env.parse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== "")));
  if (!!e.MESH_TLS_CERT !== !!e.MESH_TLS_KEY) throw new Error("set both MESH_TLS_CERT and MESH_TLS_KEY, or neither");
  // Shorter, and an instance whose beat is merely on its way would be taken for dead.
  if (e.MESH_GATEWAY_STALE_MS !== undefined && e.MESH_GATEWAY_STALE_MS < 3 * e.MESH_GATEWAY_HEARTBEAT_MS)
    throw new Error("MESH_GATEWAY_STALE_MS must be at least three times MESH_GATEWAY_HEARTBEAT_MS");
  const trustedProxies = (e.MESH_TRUSTED_PROXIES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of trustedProxies) {
    if (!isAddressOrCidr(entry)) throw new Error(`MESH_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR`);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databaseDeadlines: {
      ...(e.MESH_DB_CONNECT_TIMEOUT_MS !== undefined ? { connectTimeoutMs: e.MESH_DB_CONNECT_TIMEOUT_MS } : {}),
      ...(e.MESH_DB_STATEMENT_TIMEOUT_MS !== undefined ? { statementTimeoutMs: e.MESH_DB_STATEMENT_TIMEOUT_MS } : {}),
      ...(e.MESH_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS !== undefined ? { idleInTransactionTimeoutMs: e.MESH_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS } : {}),
    },
    dataDir: path.resolve(cwd, e.MESH_DATA_DIR),
    role: e.MESH_ROLE,
    busUrl: e.MESH_BUS_URL,
    publicUrl: e.MESH_PUBLIC_URL?.replace(/\/$/, ""),
    adminPassword: e.MESH_ADMIN_PASSWORD,
    adminApiKey: e.MESH_ADMIN_API_KEY,
    pingIntervalMs: e.MESH_PING_INTERVAL_MS,
    lastCheckedFlushMs: e.MESH_LAST_CHECKED_FLUSH_MS,
    gatewayHeartbeatMs: e.MESH_GATEWAY_HEARTBEAT_MS,
    gatewayStaleMs: e.MESH_GATEWAY_STALE_MS,
    linkConnectsPerMinute: e.MESH_LINK_CONNECTS_PER_MINUTE,
    linkAdmissionsPerSecond: e.MESH_LINK_ADMISSIONS_PER_SECOND,
    linkAdmissionsPerAddressPerSecond: e.MESH_LINK_ADMISSIONS_PER_ADDRESS_PER_SECOND,
    linkHandshakesInFlight: e.MESH_LINK_HANDSHAKES_IN_FLIGHT,
    linkHandshakesInFlightPerAddress: e.MESH_LINK_HANDSHAKES_IN_FLIGHT_PER_ADDRESS,
    bootstrapSecretFile: e.MESH_BOOTSTRAP_SECRET_FILE && path.resolve(cwd, e.MESH_BOOTSTRAP_SECRET_FILE),
    artifactsDir: e.MESH_ARTIFACTS_DIR
      ? path.resolve(cwd, e.MESH_ARTIFACTS_DIR)
      : path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../infra/dist"),
    aptSigningKeyFile: e.MESH_APT_SIGNING_KEY_FILE && path.resolve(cwd, e.MESH_APT_SIGNING_KEY_FILE),
    tls: {
      certPath: e.MESH_TLS_CERT && path.resolve(cwd, e.MESH_TLS_CERT),
      keyPath: e.MESH_TLS_KEY && path.resolve(cwd, e.MESH_TLS_KEY),
      selfSigned: e.MESH_TLS === "self-signed",
    },
    grantPostgresUrl: e.MESH_GRANT_POSTGRES_URL,
    grantPostgresPublicUrl: e.MESH_GRANT_POSTGRES_PUBLIC_URL,
    secretKey: e.MESH_SECRET_KEY,
    enrolLimitPerAddress: e.MESH_ENROL_LIMIT_PER_ADDRESS,
    enrolLimitPerToken: e.MESH_ENROL_LIMIT_PER_TOKEN,
    trustedProxies,
    connections: {
      max: e.MESH_MAX_CONNECTIONS,
      perAddress: e.MESH_MAX_CONNECTIONS_PER_ADDRESS,
      pendingHandshakes: e.MESH_MAX_PENDING_HANDSHAKES,
      pendingHandshakesPerAddress: e.MESH_MAX_PENDING_HANDSHAKES_PER_ADDRESS,
      handshakeTimeoutMs: e.MESH_HANDSHAKE_TIMEOUT_MS,
      headersTimeoutMs: e.MESH_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.MESH_REQUEST_TIMEOUT_MS,
    },
    metrics: { token: e.MESH_METRICS_TOKEN, address: e.MESH_METRICS_ADDRESS ? hostPort(e.MESH_METRICS_ADDRESS) : undefined },
    alerts: { intervalMs: e.MESH_ALERT_INTERVAL_MS, retryBaseMs: e.MESH_ALERT_RETRY_BASE_MS },
    rollouts: { intervalMs: e.MESH_ROLLOUT_INTERVAL_MS, leaseMs: Math.max(e.MESH_ROLLOUT_LEASE_MS, 3 * e.MESH_ROLLOUT_INTERVAL_MS) },
  };
}
