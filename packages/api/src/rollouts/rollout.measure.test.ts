// Measurement, not a test (run with MESH_MEASURE=1 and MESH_MEASURE_ROLLOUT=1, Postgres only): a staged rollout over 10,000
// nodes (inserted directly, as check-conflicts.measure.test.ts does) with 8 roles: the time of the save that
// starts it (role version, pins for every reached node, waves, canary released and compiled, all in one
// transaction) against an all-at-once save of the same change, and the time of each wave's release
// (pins deleted, only the released nodes recompiled) against a whole-fleet compile.
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_ROLLOUT=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        npx vitest run src/rollouts/rollout.measure.test.ts
import { describe, it } from "vitest";
import pino from "pino";
import { measureDatabase } from "../testing/measure-fleet";
import type { Deps } from "../deps";
import { upsertRole } from "../services/roles";
import { recompileFleet } from "../services/recompile-fleet";
import { releaseWave } from "./advance";

const NODES = Number(process.env.MEASURE_NODES ?? 10_000);

describe.skipIf(!process.env.MESH_MEASURE_ROLLOUT || !process.env.DATABASE_URL)("staged rollout at scale", () => {
  it(`start and waves at ${NODES} nodes`, { timeout: 10 * 60_000 }, async () => {
    const { database, sql, close } = await measureDatabase("mesh_measure", 4);
    await sql`
      insert into nodes (id, name, state, labels, public_key, machine_id, profile, inventory, gateway_id)
      select gen_random_uuid(), 'node-' || lpad(i::text, 5, '0'), 'enrolled',
        jsonb_build_object('tier', (array['web','db','cache','batch'])[1 + i % 4], 'zone', (array['a','b','c'])[1 + i % 3]),
        'key-' || i, md5(i::text), jsonb_build_object('arch', 'x86_64', 'cpus', 1 + i % 8), '{}'::jsonb, case when i % 2 = 0 then 'gw' end
      from generate_series(1, ${NODES}) as i`;
    const deps: Deps = { db: database.db, log: pino({ level: "silent" }) };
    const file = (id: string, content: string) => ({ type: "file" as const, id, path: `/etc/${id}`, content });
    const save = (name: string, selector: object, content: string, rollout?: object) =>
      upsertRole(deps, {
        actor: "user:measure",
        input: { name, selector, resources: [file(name, content)] },
        ...(rollout ? { rollout: rollout as never } : {}),
      });
    await save("base", {}, "hi\n");
    for (const tier of ["web", "db", "cache", "batch"]) await save(tier, { labels: { tier } }, tier);
    for (const zone of ["a", "b", "c"]) await save(`zone-${zone}`, { labels: { zone } }, zone);
    await sql`analyze`;
    const ms = (t0: number) => `${(performance.now() - t0).toFixed(0)} ms`;

    let t0 = performance.now();
    await save("base", {}, "all at once\n");
    console.log(`ROLLOUT ${NODES} nodes: all-at-once save of a role on every node: ${ms(t0)}`);

    t0 = performance.now();
    const started = await save("base", {}, "staged\n", { mode: "staged", canary: { count: 10 }, waves: { percent: 25 } });
    console.log(
      `ROLLOUT ${NODES} nodes: staged save (pins ${started.rollout!.plan.nodes}, waves ${JSON.stringify(started.rollout!.plan.waves)}, canary compiled): ${ms(t0)}`,
    );

    const id = started.rollout!.id;
    for (let wave = 1; wave < started.rollout!.plan.waves.length; wave++) {
      await sql`update rollouts set wave_done_at = now() where id = ${id}`;
      t0 = performance.now();
      const step = await releaseWave(deps, id, wave, new Date());
      console.log(`ROLLOUT ${NODES} nodes: release of wave ${wave} (${started.rollout!.plan.waves[wave]} nodes, compile of those only): ${ms(t0)} (${step})`);
    }
    t0 = performance.now();
    await database.db.transaction((tx) => recompileFleet(tx, { actor: "user:measure" }));
    console.log(`ROLLOUT ${NODES} nodes: reference, a whole-fleet compile with nothing to change: ${ms(t0)}`);
    await close();
  });
});
