import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestDatabase, testEngines, type TestDatabase } from "./testing";
import { CHANNELS, notify } from "./bus";
import { settings } from "./schema/index";
import { migrate } from "./migrate";

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
