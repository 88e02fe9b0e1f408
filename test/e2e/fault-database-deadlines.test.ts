// The database client's deadlines (issue 12, item 2), against a real Postgres behind a TCP proxy the
// test controls: a query over a connection whose packets are dropped ends (it does not wait for TCP),
// the pool and the LISTEN connection come back by themselves once packets flow, and long work that
// is long by nature (a migration, VACUUM) is not cut by the statement timeout that ordinary queries get;
// a transaction or an advisory lock waiting for a connection fails by the deadline like a query, and never runs later.
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

  const failure = async (query: Promise<unknown>) =>
    query.then(
      () => null,
      (err: unknown) => err,
    );
  const deadlines = { connectTimeoutMs: 1000, statementTimeoutMs: 500 };

  // A pool of its own behind a proxy of its own, for a test that needs every connection healthy at its start.
  const pools: { proxy: TcpProxy; database: Database }[] = [];
  const openPool = async (maxConnections: number) => {
    const own = await TcpProxy.forUrl(target.url).listen();
    pools.push({ proxy: own, database: await createDb({ url: own.rewrite(target.url), maxConnections, deadlines }) });
    return pools.at(-1)!;
  };

  /** Takes every connection of the pool (each reserved for an advisory lock, idle) until `letGo`, which resolves once all are given back. */
  const holdEveryConnection = async (pool: Database, connections: number) => {
    let held = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const holders = Array.from({ length: connections }, (_, n) =>
      failure(
        pool.withAdvisoryLock(7_100 + n, async () => {
          held++;
          await gate;
        }),
      ),
    );
    await waitFor("every connection to be held", () => held === connections);
    return {
      letGo: async () => {
        open();
        await Promise.all(holders);
      },
    };
  };

  beforeAll(async () => {
    target = await createPostgresDatabase("mesh_deadlines");
    proxy = await TcpProxy.forUrl(target.url).listen();
    database = await createDb({ url: proxy.rewrite(target.url), maxConnections: 4, deadlines });
    await migrate(database);
    await database.bus.subscribe(CHANNELS.node, (payload) => heard.push(payload));
  });
  afterAll(async () => {
    proxy?.setMode("pass");
    await database?.close();
    await proxy?.close();
    for (const pool of pools) {
      pool.proxy.setMode("pass");
      await pool.database.close();
      await pool.proxy.close();
    }
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

  it("packets dropped: transactions and advisory locks, more than there are connections, fail by the deadline; once packets flow both work again", async () => {
    const pool = await openPool(2);
    await Promise.all([1, 2].map((n) => pool.database.db.transaction((tx) => tx.execute(sql`select ${n}::int`))));
    pool.proxy.setMode("blackhole");
    const waiters = [
      ...Array.from({ length: 6 }, (_, n) => failure(pool.database.db.transaction((tx) => tx.execute(sql`select ${n}::int`)))),
      ...Array.from({ length: 2 }, (_, n) => failure(pool.database.withAdvisoryLock(7_200 + n, async () => {}))),
    ];
    for (const err of await Promise.all(waiters)) expect(isDatabaseUnreachable(err), String(err)).toBe(true);

    pool.proxy.setMode("pass");
    await waitFor("a transaction to commit again", () => pool.database.db.transaction((tx) => tx.execute(sql`select 1`)).then(() => true), 30_000, 200);
    expect(await pool.database.withAdvisoryLock(7_200, async () => "locked")).toBe("locked");
  });

  it("a transaction or an advisory lock whose caller was told it failed does not run its body when a connection frees later", async () => {
    // One connection: postgres.js hands it to its queue in order, so the answered waiters get it before the checks below.
    const pool = await openPool(1);
    const holder = await holdEveryConnection(pool.database, 1);
    let bodiesRun = 0;
    const waiters = [
      failure(
        pool.database.db.transaction(async (tx) => {
          bodiesRun++;
          await tx.execute(sql`select 1`);
        }),
      ),
      failure(pool.database.withAdvisoryLock(7_300, async () => void bodiesRun++)),
    ];
    for (const err of await Promise.all(waiters)) expect(isDatabaseUnreachable(err), String(err)).toBe(true);

    await holder.letGo();
    expect(await pool.database.db.transaction(async (tx) => (await tx.execute(sql`select 1`), "committed"))).toBe("committed");
    expect(await pool.database.withAdvisoryLock(7_300, async () => "locked")).toBe("locked");
    expect(bodiesRun).toBe(0);
  });
});
