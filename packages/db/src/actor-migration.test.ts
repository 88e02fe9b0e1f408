// Migration 0006 on a database that already has rows: users' bare actor names get
// their `user:` prefix, built-in actors stay, and namesake API keys are told apart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import type { Database } from "./client";
import { migrate } from "./migrate";
import { testEngines } from "./testing";
import { databaseBefore } from "./migration-test-support";

describe.each(testEngines())("migration 0006 (namespaced actors) on %s", (engine) => {
  let database: Database;
  let drop = async () => {};
  beforeAll(async () => {
    ({ database, drop } = await databaseBefore(engine, "0006"));
  });
  afterAll(async () => {
    await database?.close();
    await drop();
  });

  it("prefixes users' actor names, keeps built-in actors, and renames namesake keys", async () => {
    const db = database.db;
    await db.execute(
      sql`insert into users (name, role, password_hash, created_by) values ('admin', 'admin', 'x', 'system'), ('alice', 'admin', 'x', 'admin'), ('bootstrap', 'viewer', 'x', 'alice')`,
    );
    await db.execute(sql`insert into api_keys (id, name, role, key_hash, created_by, created_at) values
      ('aaaaaaaa', 'deploy', 'admin', 'h', 'alice', now() - interval '1 day'), ('bbbbbbbb', 'deploy', 'viewer', 'h', 'api-key', now())`);
    await db.execute(
      sql`insert into enrolment_tokens (id, secret_hash, expires_at, created_by) values ('tok001', 'h', now(), 'alice'), ('tok002', 'h', now(), 'bootstrap')`,
    );
    await db.execute(sql`insert into events (actor, action) values ('alice', 'role.upsert'), ('api-key', 'token.create'), ('key:deploy', 'token.create'),
      ('bootstrap', 'bootstrap.token'), ('control-plane', 'node.disconnect'), ('token:tok001', 'node.enrol'), ('anonymous', 'enrol.refused'), ('gone', 'x')`);
    await migrate(database);
    // PGlite answers { rows }, postgres.js an array of rows.
    const column = async (query: ReturnType<typeof sql>) => {
      const result = (await db.execute(query)) as unknown as { rows?: unknown[] } & unknown[];
      return result.rows ?? [...result];
    };
    expect(await column(sql`select actor from events order by id`)).toEqual(
      ["user:alice", "api-key", "key:deploy", "bootstrap", "control-plane", "token:tok001", "anonymous", "gone"].map((actor) => ({ actor })),
    );
    expect(await column(sql`select name, created_by from users order by name`)).toEqual([
      { name: "admin", created_by: "system" },
      { name: "alice", created_by: "user:admin" },
      { name: "bootstrap", created_by: "user:alice" },
    ]);
    expect(await column(sql`select id, name, created_by from api_keys order by id`)).toEqual([
      { id: "aaaaaaaa", name: "deploy", created_by: "user:alice" },
      { id: "bbbbbbbb", name: "deploy-bbbbbbbb", created_by: "api-key" },
    ]);
    expect(await column(sql`select created_by from enrolment_tokens order by id`)).toEqual([{ created_by: "user:alice" }, { created_by: "bootstrap" }]);
    // From now on a name is one key.
    await expect(
      db.execute(sql`insert into api_keys (id, name, role, key_hash, created_by) values ('cccccccc', 'deploy', 'admin', 'h', 'user:alice')`),
    ).rejects.toThrow();
  });
});
