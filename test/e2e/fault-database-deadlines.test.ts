// The database client's deadlines (issue 12, item 2), against a real Postgres behind a TCP proxy the
// test controls: a query over a connection whose packets are dropped ends (it does not wait for TCP),
// the pool and the LISTEN connection come back by themselves once packets flow, and long work that
// is long by nature (a migration, VACUUM) is not cut by the statement timeout that ordinary queries get.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { CHANNELS, createDb, isDatabaseUnreachable, type Database } from "@mesh/db";
import { migrate } from "@mesh/db/migrate";
import { createPostgresDatabase } from "@mesh/db/testing";
import postgres from "postgres";
import { TcpProxy } from "../harness/tcp-proxy";
import { waitFor } from "../harness/wait";

const hasPostgres = !!process.env.DATABASE_URL;

describe.runIf(hasPostgres)("database deadlines", () => {
  let target: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let database: Database;
  const heard: string[] = [];

  const failure = async (query: Promise<unknown>) => query.then(() => null, (err: unknown) => err);

  beforeAll(async () => {
    target = await createPostgresDatabase("mesh_deadlines");
    proxy = await TcpProxy.forUrl(target.url).listen();
    database = await createDb({ url: proxy.rewrite(target.url), maxConnections: 4, deadlines: { connectTimeoutMs: 1000, statementTimeoutMs: 500 } });
    await migrate(database);
    await database.bus.subscribe(CHANNELS.node, (payload) => heard.push(payload));
  });
  afterAll(async () => {
    proxy?.setMode("pass");
    await database?.close();
    await proxy?.close();
    await target?.drop();
  });

  it("a statement past the statement timeout is cancelled; the same statement runs without deadlines", async () => {
    const cancelled = await failure(database.db.execute(sql`select pg_sleep(1)`));
    expect(isDatabaseUnreachable(cancelled)).toBe(true);
    await database.withoutDeadlines((unbounded) => unbounded.db.execute(sql`select pg_sleep(1)`));
    await database.withoutDeadlines((unbounded) => unbounded.db.execute(sql`vacuum full nodes`));
  });

  it("packets dropped: queries on open and on new connections end with an error; once they flow, queries and notifications work again", async () => {
    // Every pooled connection open, and the LISTEN one idle; then more queries than connections, so some wait in the queue.
    await Promise.all([1, 2, 3, 4].map((n) => database.db.execute(sql`select ${n}::int`)));
    proxy.setMode("blackhole");
    const results = await Promise.all(Array.from({ length: 40 }, (_, n) => failure(database.db.execute(sql`select ${n}::int`))));
    for (const err of results) expect(isDatabaseUnreachable(err), String(err)).toBe(true);

    proxy.setMode("pass");
    await waitFor("queries to succeed again", () => database.db.execute(sql`select 1`).then(() => true), 30_000, 200);
    const notifier = postgres(target.url, { max: 1, onnotice: () => {} });
    try {
      await waitFor(
        "a notification to be heard again",
        async () => {
          await notifier`select pg_notify(${CHANNELS.node}, 'after-the-outage')`;
          await new Promise((r) => setTimeout(r, 200));
          return heard.includes("after-the-outage");
        },
        30_000,
        200,
      );
    } finally {
      await notifier.end();
    }
  });
});
