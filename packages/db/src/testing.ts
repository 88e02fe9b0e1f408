// Test databases: a fresh Postgres database per suite (when DATABASE_URL is set)
// and an in-memory PGlite, each migrated. Drizzle's own habit: one suite, both engines.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import postgres from "postgres";
import { createDb, type Database } from "./client";
import { migrate } from "./migrate";

export interface TestDatabase {
  database: Database;
  url?: string;
  drop(): Promise<void>;
}

export const testEngines = (): Array<"postgres" | "pglite"> => (process.env.DATABASE_URL ? ["postgres", "pglite"] : ["pglite"]);

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

/**
 * maxConnections: the Postgres pool (60 by default). Suites that open hundreds of links keep it small:
 * the server is shared by every suite running at once, and a burst of links must not take 60 connections.
 */
export async function createTestDatabase(engine: "postgres" | "pglite", opts: { maxConnections?: number } = {}): Promise<TestDatabase> {
  if (engine === "pglite") {
    const database = await createDb({ dataDir: "memory://" });
    await migrate(database);
    return { database, drop: () => database.close() };
  }
  const pg = await createPostgresDatabase();
  const database = await createDb({ url: pg.url, maxConnections: opts.maxConnections ?? 60 });
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

/** Starts nats-server on a free loopback port (the binary from PATH or /usr/sbin) for a bus test. */
export async function startNatsServer(): Promise<{ url: string; stop(): Promise<void>; restart(): Promise<void> }> {
  const { spawn } = await import("node:child_process");
  const net = await import("node:net");
  const port = await new Promise<number>((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
    s.on("error", reject);
  });
  const bin = fs.existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server";
  const launch = async () => {
    const started = spawn(bin, ["-a", "127.0.0.1", "-p", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
    await new Promise<void>((resolve, reject) => {
      let err = "";
      started.stderr!.on("data", (d: Buffer) => {
        err += d.toString();
        if (err.includes("Server is ready")) resolve();
      });
      started.on("exit", (code) => reject(new Error(`nats-server exited ${code}: ${err}`)));
      started.on("error", reject);
    });
    return started;
  };
  let child = await launch();
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    stop,
    /** Stops the server and starts it again on the same port: clients lose their connection and reconnect. */
    async restart() {
      await stop();
      child = await launch();
    },
  };
}
