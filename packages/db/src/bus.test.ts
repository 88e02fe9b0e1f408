// One change-bus suite for every implementation: LISTEN/NOTIFY on PGlite and Postgres,
// and NATS (a nats-server started here): delivery after commit only, in order, across instances.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Database } from "./client";
import { migrate } from "./migrate";
import { CHANNELS, MAX_PAYLOAD_BYTES, notify, notifyMany } from "./bus";
import { createPostgresDatabase, startNatsServer } from "./testing";
import { sql as drizzleSql } from "drizzle-orm";

type Kind = "pglite" | "postgres" | "nats";
const kinds: Kind[] = process.env.DATABASE_URL ? ["pglite", "postgres", "nats"] : ["pglite", "nats"];

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe.each(kinds)("change bus on %s", (kind) => {
  let open: () => Promise<Database>;
  let database: Database;
  const cleanups: Array<() => Promise<void>> = [];
  /** true where a second instance can share the first one's database and bus */
  const shared = kind !== "pglite";
  /** Cuts the bus's connection (the listening backend, or the NATS server); it comes back by itself. */
  let breakConnection: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    let url: string | undefined;
    let busUrl: string | undefined;
    if (kind === "nats") {
      const nats = await startNatsServer();
      cleanups.push(nats.stop);
      busUrl = nats.url;
      breakConnection = nats.restart;
    }
    if (process.env.DATABASE_URL && kind !== "pglite") {
      const pg = await createPostgresDatabase("mesh_bus");
      cleanups.push(pg.drop);
      url = pg.url;
    }
    open = async () => {
      const d = await createDb({ url, busUrl, dataDir: "memory://", maxConnections: 4 });
      cleanups.unshift(() => d.close());
      return d;
    };
    database = await open();
    await migrate(database);
    if (kind === "postgres") {
      breakConnection = async () => {
        // The listening connection's last statement is its LISTEN; ending it is what a database restart does to it.
        await database.db.execute(
          drizzleSql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %' and pid <> pg_backend_pid()`,
        );
      };
    }
  });
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it("delivers a notification made in a transaction after commit, and none from a rollback", async () => {
    const got: string[] = [];
    const unsubscribe = await database.bus.subscribe(CHANNELS.declaration, (p) => got.push(p));
    await database.db
      .transaction(async (tx) => {
        await notify(tx, CHANNELS.declaration, "rolled-back");
        throw new Error("rollback");
      })
      .catch(() => {});
    await database.db.transaction(async (tx) => {
      await notify(tx, CHANNELS.declaration, "node-1");
      await notify(tx, CHANNELS.declaration, "node-2");
    });
    await notify(database.db, CHANNELS.declaration, "direct");
    await until(() => got.length >= 3);
    expect(got).toEqual(["node-1", "node-2", "direct"]);
    await unsubscribe();
  });

  it.skipIf(kind === "pglite")("holds a transaction's notification until the commit", async () => {
    const got: string[] = [];
    const unsubscribe = await database.bus.subscribe(CHANNELS.node, (p) => got.push(p));
    await database.db.transaction(async (tx) => {
      await notify(tx, CHANNELS.node, "in-tx");
      // a notification sent outside the transaction after it overtakes it
      await notify(database.db, CHANNELS.node, "outside");
      await until(() => got.length >= 1);
      expect(got).toEqual(["outside"]);
    });
    await until(() => got.length >= 2);
    expect(got).toEqual(["outside", "in-tx"]);
    await unsubscribe();
  });

  it("drops a rolled-back savepoint's notifications and keeps its parent's", async () => {
    const got: string[] = [];
    const unsubscribe = await database.bus.subscribe(CHANNELS.grant, (p) => got.push(p));
    await database.db.transaction(async (tx) => {
      await notify(tx, CHANNELS.grant, "outer");
      await tx
        .transaction(async (inner) => {
          await notify(inner, CHANNELS.grant, "savepoint-rolled-back");
          throw new Error("rollback savepoint");
        })
        .catch(() => {});
      await tx.transaction(async (inner) => notify(inner, CHANNELS.grant, "savepoint-released"));
    });
    await notify(database.db, CHANNELS.grant, "end");
    await until(() => got.includes("end"));
    expect(got).toEqual(["outer", "savepoint-released", "end"]);
    await unsubscribe();
  });

  it("stops delivering to an unsubscribed listener and keeps the others", async () => {
    const a: string[] = [];
    const b: string[] = [];
    const stopA = await database.bus.subscribe(CHANNELS.link, (p) => a.push(p));
    const stopB = await database.bus.subscribe(CHANNELS.link, (p) => b.push(p));
    await notify(database.db, CHANNELS.link, "both");
    await until(() => a.length === 1 && b.length === 1);
    await stopA();
    await notify(database.db, CHANNELS.link, "only-b");
    await until(() => b.length === 2);
    expect(a).toEqual(["both"]);
    expect(b).toEqual(["both", "only-b"]);
    await stopB();
  });

  it("delivers many notifications made in one statement, in order, after commit, and none from a rollback", async () => {
    const got: string[] = [];
    const unsubscribe = await database.bus.subscribe(CHANNELS.node, (p) => got.push(p));
    await database.db
      .transaction(async (tx) => {
        await notifyMany(tx, [
          [CHANNELS.node, "rolled-back-1"],
          [CHANNELS.node, "rolled-back-2"],
        ]);
        throw new Error("rollback");
      })
      .catch(() => {});
    await database.db.transaction(async (tx) =>
      notifyMany(tx, [
        [CHANNELS.node, "a"],
        [CHANNELS.declaration, "other-channel"],
        [CHANNELS.node, "b"],
        [CHANNELS.node, "c"],
      ]),
    );
    await notify(database.db, CHANNELS.node, "end");
    await until(() => got.includes("end"));
    expect(got).toEqual(["a", "b", "c", "end"]);
    await expect(
      notifyMany(database.db, [
        [CHANNELS.node, "fine"],
        [CHANNELS.node, "x".repeat(MAX_PAYLOAD_BYTES + 1)],
      ]),
    ).rejects.toThrow(/exceeds/);
    await unsubscribe();
  });

  it("refuses a payload over the bus limit", async () => {
    await expect(notify(database.db, CHANNELS.node, "x".repeat(MAX_PAYLOAD_BYTES + 1))).rejects.toThrow(/exceeds/);
  });

  it.skipIf(!shared)("carries a commit on one instance to another instance", async () => {
    const other = await open();
    const got: string[] = [];
    const unsubscribe = await other.bus.subscribe(CHANNELS.declaration, (p) => got.push(p));
    await database.db.transaction(async (tx) => notify(tx, CHANNELS.declaration, "from-first"));
    await until(() => got.length >= 1);
    expect(got).toEqual(["from-first"]);
    await unsubscribe();
  });

  it.skipIf(kind === "pglite")("tells a subscriber it may have missed notifications once its connection is back, and keeps delivering", async () => {
    const got: string[] = [];
    let gaps = 0;
    const unsubscribe = await database.bus.subscribe(CHANNELS.declaration, (p) => got.push(p), { onGap: () => gaps++ });
    await notify(database.db, CHANNELS.declaration, "before");
    await until(() => got.length >= 1);
    expect(gaps).toBe(0);
    await breakConnection!();
    for (let i = 0; i < 3 && gaps === 0; i++) await until(() => gaps > 0);
    expect(gaps).toBe(1);
    // The subscription is active again when the gap is told.
    await notify(database.db, CHANNELS.declaration, "after");
    await until(() => got.includes("after"));
    expect(got).toEqual(["before", "after"]);
    await unsubscribe();
  });
});
