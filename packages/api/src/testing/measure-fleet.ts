// What the *.measure.test.ts files share (Postgres only, run by hand with MESH_MEASURE=1): a fresh
// migrated database with a plain client to seed a fleet in bulk, the 4-tier, 3-zone fleet most of
// them seed, and a figure as the median of a few runs.
import postgres from "postgres";
import { createDb } from "@mesh/db";
import { migrate } from "@mesh/db/migrate";
import { createPostgresDatabase } from "@mesh/db/testing";

/** The database, its pool (`maxConnections`) and a one-connection client; `close` ends both and drops the database. */
export async function measureDatabase(name = "mesh_measure", maxConnections = 2) {
  const pg = await createPostgresDatabase(name);
  const database = await createDb({ url: pg.url, maxConnections });
  await migrate(database);
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  const close = async () => {
    await sql.end();
    await database.close();
    await pg.drop();
  };
  return { pg, database, sql, close };
}

/** `n` enrolled nodes node-00001.., labelled tier (web, db, cache, batch) and zone (a, b, c) in turn. */
export async function insertTieredNodes(sql: postgres.Sql, n: number) {
  await sql`
    insert into nodes (id, name, state, labels, public_key, machine_id, profile, inventory)
    select gen_random_uuid(), 'node-' || lpad(i::text, 5, '0'), 'enrolled',
      jsonb_build_object('tier', (array['web','db','cache','batch'])[1 + i % 4], 'zone', (array['a','b','c'])[1 + i % 3]),
      'key-' || i, md5(i::text), jsonb_build_object('arch', 'x86_64', 'cpus', 1 + i % 8), '{}'::jsonb
    from generate_series(1, ${n}) as i`;
}

/** Runs `fn` `runs` times, one after another; the last result and "median M ms (min A, max B)". */
export async function timeRuns<T>(runs: number, fn: () => Promise<T>): Promise<{ out: T; figures: string }> {
  const xs: number[] = [];
  let out: T | undefined;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    out = await fn();
    xs.push(performance.now() - t0);
  }
  xs.sort((a, b) => a - b);
  return { out: out as T, figures: `median ${xs[Math.floor(runs / 2)]!.toFixed(1)} ms (min ${xs[0]!.toFixed(1)}, max ${xs.at(-1)!.toFixed(1)})` };
}
