import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { createTestDatabase, testEngines, type TestDatabase } from "./testing";
import { CHANNELS, notify } from "./bus";
import { settings } from "./schema/index";
import { migrate } from "./migrate";
import { rowsOf } from "./rows";

describe.each(testEngines())("database on %s", (engine) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
  });
  afterAll(() => t?.drop());

  it("migrates idempotently", async () => {
    await migrate(t.database);
    await t.database.db.insert(settings).values({ key: "k", value: "v" });
    const rows = await t.database.db.select().from(settings).where(eq(settings.key, "k"));
    expect(rows).toHaveLength(1);
  });

  it("keeps fleet-wide updates of nodes on their pages (HOT: no index entries), as decision 0056 needs", async () => {
    const count = 400;
    await t.database.db.execute(sql`
      insert into nodes (name, public_key, machine_id, profile, inventory)
      select 'hot-' || g, 'key-' || g, 'machine-' || g, '{"os":"linux"}'::jsonb, '{"packages":[]}'::jsonb from generate_series(1, ${count}) g`);
    const counters = async (tx: Parameters<Parameters<typeof t.database.db.transaction>[0]>[0]) => {
      const result = await tx.execute(sql`select n_tup_upd::int as updated, n_tup_hot_upd::int as hot from pg_stat_xact_user_tables where relname = 'nodes'`);
      return rowsOf<{ updated: number; hot: number }>(result)[0]!;
    };
    // Twice: the second finds the first's old versions on every page, and must make room by pruning them.
    for (const round of [1, 2]) {
      const { updated, hot } = await t.database.db.transaction(async (tx) => {
        // The backend's counters may still hold earlier transactions' counts until they are flushed: a difference.
        const before = await counters(tx);
        await tx.execute(sql`update nodes set declared_version = declared_version + 1 where name like 'hot-%'`);
        const after = await counters(tx);
        return { updated: after.updated - before.updated, hot: after.hot - before.hot };
      });
      // Packed full (fillfactor 100) this is 1 of 400: only the last page has room for new versions.
      expect({ round, updated, hot }).toEqual({ round, updated: count, hot: count });
    }
  });

  it("delivers a notification published in a transaction only after commit", async () => {
    const got: string[] = [];
    const unsubscribe = await t.database.bus.subscribe(CHANNELS.declaration, (p) => got.push(p));
    await t.database.db
      .transaction(async (tx) => {
        await notify(tx, CHANNELS.declaration, "rolled-back");
        throw new Error("rollback");
      })
      .catch(() => {});
    await t.database.db.transaction(async (tx) => {
      await notify(tx, CHANNELS.declaration, "node-1");
    });
    for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(["node-1"]);
    await unsubscribe();
  });
});
