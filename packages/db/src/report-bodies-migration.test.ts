// Migration 0012 on a database that already has reports: bodies move to report_bodies (one row per
// distinct body, named by the sha256 of its jsonb text), the rows keep their own parts, nothing is lost.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import type { Database } from "./client";
import { migrate } from "./migrate";
import { testEngines } from "./testing";
import { databaseBefore } from "./migration-test-support";

const said = { owned: [{ id: "file:/etc/a", type: "file", digest: "a".repeat(64) }], drift: [], errors: [], skipped: [], storeLost: false };

describe.each(testEngines())("migration 0012 (report bodies) on %s", (engine) => {
  let database: Database;
  let drop = async () => {};
  beforeAll(async () => {
    ({ database, drop } = await databaseBefore(engine, "0012"));
  });
  afterAll(async () => {
    await database?.close();
    await drop();
  });

  it("moves each distinct body to report_bodies once and keeps every report's own parts", async () => {
    const db = database.db;
    // PGlite answers { rows }, postgres.js an array of rows.
    const rows = async (query: ReturnType<typeof sql>) => {
      const result = (await db.execute(query)) as unknown as { rows?: unknown[] } & unknown[];
      return (result.rows ?? [...result]) as Array<Record<string, unknown>>;
    };
    const [a, b] = await rows(sql`insert into nodes (name, public_key, machine_id, profile, inventory) values
      ('a', 'ka', 'ma', '{}', '{}'), ('b', 'kb', 'mb', '{}', '{}') returning id`);
    const first = { ...said, declarationVersion: 1, reconciledAt: "2026-12-01T10:00:00.123Z" };
    const second = {
      ...said,
      declarationVersion: 2,
      reconciledAt: "2026-12-01T10:05:00Z",
      storeGeneration: 7,
      origin: { stream: "ab".repeat(8), sequence: 3 },
    };
    const other = { ...said, owned: [], declarationVersion: 4, reconciledAt: "2026-12-01T11:00:00Z" };
    const json = (v: unknown) => JSON.stringify(v);
    await db.execute(sql`insert into report_history (node_id, declaration_version, hash, body) values
      (${a!.id}, 1, 'h1', ${json(first)}::jsonb), (${a!.id}, 2, 'h2', ${json(second)}::jsonb), (${b!.id}, 4, 'h3', ${json(other)}::jsonb)`);
    await db.execute(sql`insert into latest_reports (node_id, declaration_version, hash, body) values
      (${a!.id}, 2, 'h2', ${json(second)}::jsonb), (${b!.id}, 4, 'h3', ${json(other)}::jsonb)`);
    await migrate(database);

    // Two bodies for five rows: a's two reports say the same thing.
    const bodies = await rows(sql`select hash, body from report_bodies order by hash`);
    expect(bodies).toHaveLength(2);
    expect(bodies.map((r) => r.body)).toEqual(expect.arrayContaining([said, { ...said, owned: [] }]));
    for (const r of bodies) expect(r.hash).toMatch(/^[0-9a-f]{64}$/);
    const rebuilt = sql`b.body || jsonb_build_object('declarationVersion', r.declaration_version, 'reconciledAt', r.reconciled_at)
      || jsonb_strip_nulls(jsonb_build_object('origin', r.origin, 'storeGeneration', r.store_generation)) as report`;
    const history = await rows(sql`select r.hash, ${rebuilt} from report_history r join report_bodies b on b.hash = r.body_hash order by r.id`);
    expect(history).toEqual([
      { hash: "h1", report: first },
      { hash: "h2", report: second },
      { hash: "h3", report: other },
    ]);
    const latest = await rows(sql`select r.hash, ${rebuilt} from latest_reports r join report_bodies b on b.hash = r.body_hash order by r.declaration_version`);
    expect(latest).toEqual([
      { hash: "h2", report: second },
      { hash: "h3", report: other },
    ]);
    // The bodies are gone from the rows.
    const columns = await rows(
      sql`select table_name, column_name from information_schema.columns where table_name in ('latest_reports', 'report_history') and column_name = 'body'`,
    );
    expect(columns).toEqual([]);
  });
});
