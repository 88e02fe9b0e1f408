// Measurement, not a test (run with MESH_MEASURE=1 and MESH_MEASURE_REVOKE=1, Postgres only): one
// revoke-offline sweep at 10,000 nodes, half of them disconnected past their role's limit: statements
// and milliseconds per sweep (capped at 1,000 nodes revoked), and a sweep with no role having the policy.
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_REVOKE=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        npx vitest run src/services/revoke-offline.measure.test.ts
import { describe, it } from "vitest";
import pino from "pino";
import { measureDatabase } from "../testing/measure-fleet";
import { countingDb } from "../testing/counting-db";
import { revokeOfflineNodes } from "./revoke-offline";

const NODES = Number(process.env.MEASURE_NODES ?? 10_000);

describe.skipIf(!process.env.MESH_MEASURE_REVOKE || !process.env.DATABASE_URL)("revoke-offline sweep at scale", () => {
  it(`one sweep at ${NODES} nodes`, { timeout: 10 * 60_000 }, async () => {
    const { database, sql, close } = await measureDatabase();
    await sql`
      insert into nodes (id, name, state, public_key, machine_id, profile, inventory, labels, last_seen_at)
      select gen_random_uuid(), 'node-' || i, case when i % 2 = 0 then 'disconnected' else 'enrolled' end, 'key-' || i, md5(i::text),
        jsonb_build_object('arch', 'x86_64', 'cpus', 4), '{}'::jsonb, jsonb_build_object('tier', case when i % 4 < 2 then 'web' else 'db' end),
        now() - interval '2 hours'
      from generate_series(1, ${NODES}) as i`;
    await sql`insert into roles (name, selector, resources) values ('db', '{"labels":{"tier":"db"}}', '[]')`;
    await sql`analyze`;
    const counting = countingDb(database.db);
    const deps = { db: counting.db, log: pino({ level: "silent" }) };
    const sweep = async (label: string) => {
      const t0 = performance.now();
      const r = await revokeOfflineNodes(deps);
      console.log(`REVOKE ${NODES} nodes: ${label}: ${(performance.now() - t0).toFixed(0)} ms, ${r?.nodes} revoked`);
    };
    await sweep("no role has the policy");
    await sql`insert into roles (name, selector, resources, revoke_offline_minutes) values ('web', '{"labels":{"tier":"web"},"profile":{"arch":"x86_64"}}', '[]', 60)`;
    await sweep("first sweep (2,500 due, 1,000 a sweep)");
    await sweep("second sweep");
    await sweep("third sweep");
    await sweep("nothing left");
    await close();
  });
});
