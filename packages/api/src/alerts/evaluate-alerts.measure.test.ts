// Measurement, not a test (run with MESH_MEASURE=1 and MESH_MEASURE_ALERTS=1, Postgres only): one alert
// evaluation after a fleet-wide burst at 10,000 nodes (every node drifted, a tenth went offline past N,
// a tenth stored a failing report), with three webhooks watching everything: how many deliveries,
// statements and milliseconds one run costs.
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_ALERTS=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        npx vitest run src/alerts/evaluate-alerts.measure.test.ts
import { describe, it } from "vitest";
import pino from "pino";
import { measureDatabase } from "../testing/measure-fleet";
import { countingDb } from "../testing/counting-db";
import { createAlertEvaluator } from "./evaluate-alerts";

const NODES = Number(process.env.MEASURE_NODES ?? 10_000);

describe.skipIf(!process.env.MESH_MEASURE_ALERTS || !process.env.DATABASE_URL)("alert evaluation at scale", () => {
  it(`one run after a burst at ${NODES} nodes`, { timeout: 10 * 60_000 }, async () => {
    const { database, sql, close } = await measureDatabase();
    await sql`
      insert into nodes (id, name, state, public_key, machine_id, profile, inventory, error_count, last_changed_at, last_seen_at)
      select gen_random_uuid(), 'node-' || i, case when i % 10 = 0 then 'disconnected' else 'enrolled' end, 'key-' || i, md5(i::text), '{}'::jsonb, '{}'::jsonb,
        case when i % 10 = 1 then 2 else 0 end, case when i % 10 = 1 then now() end, now() - interval '10 minutes' + interval '5 seconds'
      from generate_series(1, ${NODES}) as i`;
    await sql`insert into webhooks (name, url, events, offline_minutes, secret, created_by)
      select 'hook-' || k, 'http://127.0.0.1:9/x', '["offline","failing","drifted","conflicted","revoked","enrolled"]'::jsonb, 10, 's', 'measure' from generate_series(1, 3) k`;
    await sql`update alert_cursor set evaluated_at = now() - interval '1 minute', event_id = (select coalesce(max(id), 0) from events)`;
    await sql`insert into events (actor, action, node_id, data) select 'node:' || id, 'node.drift', id, '{"count":1,"ids":["f"]}'::jsonb from nodes`;
    await sql`insert into report_bodies (hash, body) values ('b', '{}'::jsonb) on conflict do nothing`;
    await sql`insert into latest_reports (node_id, declaration_version, hash, body_hash, reconciled_at) select id, 1, 'h', 'b', now()::text from nodes where error_count > 0`;
    await sql`analyze`;
    // Past the offline threshold for the disconnected tenth.
    await new Promise((r) => setTimeout(r, 6_000));
    const counting = countingDb(database.db);
    const evaluate = createAlertEvaluator({ db: counting.db, log: pino({ level: "silent" }) });
    const t0 = performance.now();
    const result = await evaluate();
    const ms = performance.now() - t0;
    const [totals] = await sql<{ n: number; bytes: number }[]>`select count(*)::int as n, coalesce(sum(length(body)), 0)::int as bytes from alert_deliveries`;
    console.log(
      `ALERTS ${NODES} nodes, 3 webhooks: one run ${ms.toFixed(0)} ms, ${counting.count()} statements (a plain read, then 1 transaction), ${result?.deliveries} deliveries queued (${totals!.n} rows, ${(totals!.bytes / 1024).toFixed(0)} KiB of bodies)`,
    );
    // Audit events are read 5,000 a run: the second run takes the rest of the burst, the third has nothing to do.
    for (const label of ["second run (the rest of the burst)", "an idle run"]) {
      const t1 = performance.now();
      const r = await evaluate();
      console.log(`ALERTS ${NODES} nodes: ${label} ${(performance.now() - t1).toFixed(0)} ms, ${r?.deliveries} deliveries`);
    }
    await close();
  });
});
