// The readiness check's bus round trip: ok when the instance hears its own token back; a bus that
// delivers nothing (a lost subscription) is said to be so within the deadline, and a notify that
// fails is said to fail.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type ChangeBus, type Database } from "@mesh/db";
import { migrate } from "@mesh/db/migrate";
import { startBusProbe } from "./bus-probe";

describe("bus probe (PGlite)", () => {
  let database: Database;
  beforeAll(async () => {
    database = await createDb({ dataDir: "memory://" });
    await migrate(database);
  });
  afterAll(async () => {
    await database?.close();
  });

  it("hears its own notification back", async () => {
    const probe = await startBusProbe(database.db, database.bus);
    expect(await probe.check(2_000)).toBe("ok");
    expect(await probe.check(2_000)).toBe("ok");
    await probe.close();
  });

  it("says so when nothing comes back within the deadline (a subscription that hears nothing)", async () => {
    const deaf: ChangeBus = { subscribe: async () => async () => {} };
    const probe = await startBusProbe(database.db, deaf);
    expect(await probe.check(100)).toMatch(/no notification heard back within 100 ms/);
  });

  it("says so when the notification cannot be sent", async () => {
    const broken = { execute: async () => Promise.reject(new Error("connection refused")) } as unknown as Database["db"];
    const probe = await startBusProbe(broken, database.bus);
    expect(await probe.check(2_000)).toMatch(/cannot notify: connection refused/);
    await probe.close();
  });
});
