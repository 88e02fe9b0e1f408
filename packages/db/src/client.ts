// One database handle for the control plane: postgres.js when a URL is given,
// embedded PGlite on disk when not. Both are drizzle PgDatabases with one schema.
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import postgres from "postgres";
import { PGlite } from "@electric-sql/pglite";
import * as schema from "./schema/index";
import { createPostgresBus, createPgliteBus, type ChangeBus } from "./bus";
import { createNatsBus } from "./nats-bus";
import { useOutbox } from "./bus-outbox";
import { postgresDeadlineOptions, resolveDeadlines, type DatabaseDeadlines } from "./deadlines";
import { withQueryDeadline } from "./query-deadline";

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle; services accept either. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

export interface Database {
  db: Db;
  bus: ChangeBus;
  kind: "postgres" | "pglite";
  /** Runs fn while holding a cluster-wide advisory lock (a no-op lock on PGlite, which has one process). */
  withAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T>;
  /**
   * Runs fn on a connection of its own without the statement, idle-in-transaction and response
   * deadlines (the connect timeout stays): for work that is long by nature, migrations and VACUUM.
   * On PGlite, which honours none of them, fn gets this database.
   */
  withoutDeadlines<T>(fn: (unbounded: Pick<Database, "db" | "withAdvisoryLock">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface CreateDbOptions {
  /** postgres:// URL; without it PGlite is used. */
  url?: string;
  /** PGlite data directory; "memory://" for an in-memory instance. */
  dataDir?: string;
  /** Where postgres notices go (postgres.js prints them to stdout otherwise). */
  onNotice?: (message: string) => void;
  maxConnections?: number;
  /** nats://host:port: the change bus on NATS instead of LISTEN/NOTIFY (decision 0016). */
  busUrl?: string;
  /** Where bus errors go (NATS disconnects, dropped payloads). */
  onBusError?: (message: string) => void;
  /** Postgres only (deadlines.ts has the defaults and why); PGlite honours none of them. */
  deadlines?: Partial<DatabaseDeadlines>;
}

/** Swaps the database's LISTEN/NOTIFY bus for NATS when a bus URL is given. */
async function withBus(database: Database, options: CreateDbOptions): Promise<Database> {
  if (!options.busUrl) return database;
  const nats = await createNatsBus(options.busUrl, { onError: options.onBusError });
  useOutbox(database.db, nats.publish);
  return {
    ...database,
    bus: nats.bus,
    async close() {
      await nats.close();
      await database.close();
    },
  };
}

export async function createDb(options: CreateDbOptions): Promise<Database> {
  return withBus(await openDb(options), options);
}

async function openDb(options: CreateDbOptions): Promise<Database> {
  if (options.url) {
    const deadlines = resolveDeadlines(options.deadlines);
    const pool = openPostgres(options.url, options, deadlines, options.maxConnections ?? 10);
    return {
      db: pool.db,
      withAdvisoryLock: pool.withAdvisoryLock,
      bus: createPostgresBus(pool.sql),
      kind: "postgres",
      async withoutDeadlines(fn) {
        // Two connections: one may hold an advisory lock while the other works.
        const unbounded = openPostgres(options.url!, options, { ...deadlines, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0, responseTimeoutMs: 0 }, 2);
        try {
          return await fn(unbounded);
        } finally {
          await unbounded.sql.end({ timeout: 5 });
        }
      },
      close: () => pool.sql.end({ timeout: 5 }),
    };
  }
  const pg = new PGlite(options.dataDir ?? "memory://");
  await pg.waitReady;
  const db = drizzlePglite({ client: pg, schema }) as unknown as Db;
  const database: Database = {
    db,
    bus: createPgliteBus(pg),
    kind: "pglite",
    withAdvisoryLock: (_key, fn) => fn(),
    withoutDeadlines: (fn) => fn(database),
    close: () => pg.close(),
  };
  return database;
}

/**
 * A postgres.js pool with the deadlines: connect and idle by the driver, statement and idle-in-transaction
 * by the server, silence by the socket, and a whole wait (queue included) per query, transaction and reserved connection.
 */
function openPostgres(url: string, options: CreateDbOptions, deadlines: DatabaseDeadlines, max: number) {
  const sql = postgres(url, {
    max,
    onnotice: (n) => options.onNotice?.(String(n.message)),
    ...postgresDeadlineOptions(url, deadlines),
  });
  // Queued included: connecting, then answering. Off when the response deadline is (work without deadlines).
  const queryDeadlineMs = deadlines.responseTimeoutMs > 0 ? deadlines.connectTimeoutMs + deadlines.responseTimeoutMs : 0;
  const bounded = withQueryDeadline(sql, queryDeadlineMs);
  const db = drizzlePostgres({ client: bounded, schema }) as unknown as Db;
  return {
    sql,
    db,
    async withAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T> {
      const conn = await bounded.reserve();
      try {
        await conn`select pg_advisory_lock(${key})`;
        try {
          return await fn();
        } finally {
          await conn`select pg_advisory_unlock(${key})`;
        }
      } finally {
        conn.release();
      }
    },
  };
}
