// One test database per describe block (PGlite, or a fresh Postgres database when
// DATABASE_URL is set) and the service deps over it: the setup every service test shares.
import { afterAll, beforeAll } from "vitest";
import pino from "pino";
import { createTestDatabase } from "@mesh/db/testing";
import type { Deps } from "../deps";

export function useServiceDeps(engine: "postgres" | "pglite", set: (deps: Deps) => void): void {
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const t = await createTestDatabase(engine);
    drop = () => t.drop();
    set({ db: t.database.db, log: pino({ level: "silent" }) });
  });
  afterAll(() => drop?.());
}
