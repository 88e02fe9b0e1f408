// Test databases: a fresh Postgres database per suite (when DATABASE_URL is set)
// and an in-memory PGlite, each migrated. Drizzle's own habit: one suite, both engines.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { createDb, type Database } from "./client";
import { migrate } from "./migrate";

export interface TestDatabase {
  database: Database;
  url?: string;
  drop(): Promise<void>;
}

export const testEngines = (): Array<"postgres" | "pglite"> =>
  process.env.DATABASE_URL ? ["postgres", "pglite"] : ["pglite"];

/** Makes a new empty Postgres database next to DATABASE_URL and returns its URL. */
export async function createPostgresDatabase(prefix = "mesh_test"): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error("DATABASE_URL is not set");
  const name = `${prefix}_${randomBytes(5).toString("hex")}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(base, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

export async function createTestDatabase(engine: "postgres" | "pglite"): Promise<TestDatabase> {
  if (engine === "pglite") {
    const database = await createDb({ dataDir: "memory://" });
    await migrate(database);
    return { database, drop: () => database.close() };
  }
  const pg = await createPostgresDatabase();
  const database = await createDb({ url: pg.url, maxConnections: 60 });
  await migrate(database);
  return {
    database,
    url: pg.url,
    async drop() {
      await database.close();
      await pg.drop();
    },
  };
}
