// Measurement, not a test (run with MESH_MEASURE=1 and MESH_MEASURE_CONFLICTS=1, Postgres only): the
// conflict check a role save and a bulk label edit now run first (check-conflicts.ts), at 10,000
// nodes with 8 roles, against role.plan (one compile per distinct matched-role set, plus the latest reports) as a reference.
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_CONFLICTS=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        npx vitest run src/services/check-conflicts.measure.test.ts
import { describe, it } from "vitest";
import { nodes } from "@mesh/db";
import { insertTieredNodes, measureDatabase, timeRuns } from "../testing/measure-fleet";
import { Role } from "@mesh/protocol";
import { checkConflicts } from "./check-conflicts";
import { planRole } from "./plan-role";

const NODES = Number(process.env.MEASURE_NODES ?? 10_000);
const RUNS = 5;

describe.skipIf(!process.env.MESH_MEASURE_CONFLICTS || !process.env.DATABASE_URL)("conflict check at scale", () => {
  it(`role save and bulk label check at ${NODES} nodes`, { timeout: 10 * 60_000 }, async () => {
    const { database, sql, close } = await measureDatabase();
    await insertTieredNodes(sql, NODES);
    const file = (id: string, content: string) => ({ type: "file", id, path: `/etc/${id}`, content });
    const roles = [
      { name: "base", selector: {}, resources: [file("motd", "hi\n")] },
      ...["web", "db", "cache", "batch"].map((tier) => ({ name: tier, selector: { labels: { tier } }, resources: [file(`${tier}.conf`, tier)] })),
      ...["a", "b", "c"].map((zone) => ({ name: `zone-${zone}`, selector: { labels: { zone } }, resources: [file(`zone`, zone)] })),
    ];
    for (const r of roles) await sql`insert into roles (name, selector, resources) values (${r.name}, ${sql.json(r.selector)}, ${sql.json(r.resources)})`;
    await sql`analyze`;
    const deps = { db: database.db };
    const time = async (label: string, fn: () => Promise<unknown>) => {
      const { out, figures } = await timeRuns(RUNS, fn);
      console.log(`CONFLICTS ${NODES} nodes, ${label}: ${figures}`, JSON.stringify(out).slice(0, 160));
    };
    const clash = Role.parse({ name: "web", selector: { labels: { tier: "web" } }, resources: [file("motd", "web\n")] });
    await time("checkConflicts, a role that conflicts on a quarter of the fleet", () => checkConflicts(deps.db, { role: clash }));
    const calm = Role.parse({ name: "web", selector: { labels: { tier: "web" } }, resources: [file("web.conf", "web2")] });
    await time("checkConflicts, a role with no conflict", () => checkConflicts(deps.db, { role: calm }));
    const ids = (await database.db.select({ id: nodes.id }).from(nodes)).map((n) => n.id);
    await time(`checkConflicts, bulk labels on all ${ids.length} nodes`, () =>
      checkConflicts(deps.db, { labels: ids.map((id, i) => ({ id, labels: { tier: "web", zone: ["a", "b"][i % 2]! } })) }),
    );
    await time("role.plan of the no-conflict role (reference)", () => planRole(deps, { input: calm }));
    await close();
  });
});
