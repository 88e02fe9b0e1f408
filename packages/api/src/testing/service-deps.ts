// One test database per describe block (PGlite, or a fresh Postgres database when
// DATABASE_URL is set) and the service deps over it: the setup every service test shares.
import { afterAll, beforeAll } from "vitest";
import pino from "pino";
import { createTestDatabase, type TestDatabase } from "@mesh/db/testing";
import type { Deps } from "../deps";

/** `set` also gets the test database itself (its bus, its URL) for the tests that need more than the deps. */
export function useServiceDeps(engine: "postgres" | "pglite", set: (deps: Deps, t: TestDatabase) => void, opts: { maxConnections?: number } = {}): void {
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const t = await createTestDatabase(engine, opts);
    drop = () => t.drop();
    set({ db: t.database.db, log: pino({ level: "silent" }) }, t);
  }, 60_000);
  afterAll(() => drop?.());
}
