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
    const sql = postgres(options.url, {
      max: options.maxConnections ?? 10,
      onnotice: (n) => options.onNotice?.(String(n.message)),
    });
    const db = drizzlePostgres({ client: sql, schema }) as unknown as Db;
    return {
      db,
      bus: createPostgresBus(sql),
      kind: "postgres",
      async withAdvisoryLock(key, fn) {
        const conn = await sql.reserve();
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
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const pg = new PGlite(options.dataDir ?? "memory://");
  await pg.waitReady;
  const db = drizzlePglite({ client: pg, schema }) as unknown as Db;
  return { db, bus: createPgliteBus(pg), kind: "pglite", withAdvisoryLock: (_key, fn) => fn(), close: () => pg.close() };
}
