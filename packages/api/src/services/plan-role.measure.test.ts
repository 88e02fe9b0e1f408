// Measurement, not a test (run with MESH_MEASURE=1 and MESH_MEASURE_PLAN=1, Postgres only): role.plan at
// 10,000 nodes with 8 roles, every node with a latest report (the fleet's few distinct bodies, as
// hosts alike report alike), some web nodes reporting a missing parent. One compile per distinct
// matched-role set, the reports in one statement, the classification once per (compiles, body).
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_PLAN=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        npx vitest run src/services/plan-role.measure.test.ts
import { describe, expect, it } from "vitest";
import { insertTieredNodes, measureDatabase, timeRuns } from "../testing/measure-fleet";
import { Resource, Role } from "@mesh/protocol";
import { planRole } from "./plan-role";
import { declaredState, stateDigest } from "./declared-state";
import { reportBody } from "./report-store";
import { testReport } from "../testing/host-facts";

const NODES = Number(process.env.MEASURE_NODES ?? 10_000);
const RUNS = 5;

describe.skipIf(!process.env.MESH_MEASURE_PLAN || !process.env.DATABASE_URL)("role.plan at scale", () => {
  it(`role.plan at ${NODES} nodes with reports`, { timeout: 10 * 60_000 }, async () => {
    const { database, sql, close } = await measureDatabase("mesh_measure_plan");
    await insertTieredNodes(sql, NODES);
    const file = (id: string, content: string) => Resource.parse({ type: "file", id, path: `/etc/${id}`, content });
    const roles = [
      { name: "base", selector: {}, resources: [file("motd", "hi\n")] },
      ...["web", "db", "cache", "batch"].map((tier) => ({ name: tier, selector: { labels: { tier } }, resources: [file(`${tier}.conf`, `${tier}\n`)] })),
      ...["a", "b", "c"].map((zone) => ({ name: `zone-${zone}`, selector: { labels: { zone } }, resources: [file("zone", zone)] })),
    ];
    for (const r of roles)
      await sql`insert into roles (name, selector, resources) values (${r.name}, ${sql.json(r.selector)}, ${sql.json(r.resources as never)})`;
    // What hosts report: one body per (tier, zone) holding its files as declared; 1 web node in 50 never got web.conf (its parent was missing).
    const owned = (...rs: Resource[]) => rs.map((r) => ({ id: r.id, type: r.type, digest: stateDigest(declaredState(r)) }));
    const bodies: Array<{ tier: string; zone: string; broken: boolean; hash: string; json: string }> = [];
    for (const tier of ["web", "db", "cache", "batch"])
      for (const zone of ["a", "b", "c"])
        for (const broken of [false, true]) {
          const files = [file("motd", "hi\n"), file("zone", zone), ...(broken ? [] : [file(`${tier}.conf`, `${tier}\n`)])];
          const errors = broken
            ? [{ id: `${tier}.conf`, message: `parent directory of /etc/${tier}.conf does not exist (declare it as a directory resource)` }]
            : [];
          const report = testReport(1, { owned: owned(...files), errors });
          bodies.push({ tier, zone, broken, ...reportBody(report) });
        }
    for (const b of bodies) await sql`insert into report_bodies (hash, body) values (${b.hash}, ${b.json}::jsonb)`;
    await sql`
      insert into latest_reports (node_id, declaration_version, hash, body_hash, reconciled_at)
      select n.id, 1, b.hash, b.hash, now()::text
      from (select id, labels, row_number() over (order by name) as i from nodes) n
      join jsonb_to_recordset(${sql.json(bodies.map(({ json: _j, ...b }) => b) as never)}) as b(tier text, zone text, broken boolean, hash text)
        on b.tier = n.labels->>'tier' and b.zone = n.labels->>'zone' and b.broken = (n.i % 50 = 0)`;
    await sql`analyze`;
    const deps = { db: database.db };
    const change = Role.parse({ name: "web", selector: { labels: { tier: "web" } }, resources: [file("web.conf", "web\nmore\n")] });
    const { out: plan, figures } = await timeRuns(RUNS, () => planRole(deps, { input: change }));
    console.log(`PLAN ${NODES} nodes, role.plan of a file change on a quarter of the fleet: ${figures}; ${plan.summary}; ${JSON.stringify(plan).length} bytes`);
    expect(plan.groups.reduce((n, g) => n + g.count, 0)).toBe(NODES);
    await close();
  });
});
