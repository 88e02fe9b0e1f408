// Measurement, not a test (not collected by `npm test`; run with MESH_MEASURE=1 and MESH_MEASURE_LIST=1, Postgres only): node.list's first page at
// 10,000 nodes sorted by last seen, now derived (a connected node's is its gateway's heartbeat), against
// the stored column it replaced and the default sort. Seeds like test/bench/fleet-page.ts, half the
// enrolled nodes held by one of two gateways.
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_LIST=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        npx vitest run src/services/list-nodes.measure.test.ts
import { describe, it } from "vitest";
import { desc, asc } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { measureDatabase, timeRuns } from "../testing/measure-fleet";
import { listNodes } from "./list-nodes";
import { countNodes } from "./count-nodes";

const NODES = Number(process.env.MEASURE_NODES ?? 10_000);
const RUNS = 15;

describe.skipIf(!process.env.MESH_MEASURE_LIST || !process.env.DATABASE_URL)("node.list at scale", () => {
  it(`first page sorted by last seen at ${NODES} nodes`, { timeout: 10 * 60_000 }, async () => {
    const { database, sql, close } = await measureDatabase();
    await sql`insert into gateways (id, heartbeat_at) values ('gw-1', now()), ('gw-2', now() - interval '2 seconds')`;
    await sql`
      insert into nodes (id, name, state, labels, public_key, machine_id, profile, inventory, declared_version, applied_version, host_version, last_seen_at, gateway_id, link_id)
      select gen_random_uuid(), 'node-' || lpad(i::text, 5, '0'),
        (array['enrolled','enrolled','enrolled','enrolled','enrolled','enrolled','disconnected','retiring','retired','revoked'])[1 + i % 10],
        jsonb_build_object('tier', (array['web','db','cache','batch'])[1 + i % 4]), 'key-' || i, md5(i::text), '{}'::jsonb, '{}'::jsonb, 2, 2, '0.1.0',
        now() - (i % 600) * interval '1 second',
        case when i % 10 < 6 and i % 2 = 0 then 'gw-' || (1 + i % 4 / 2) end,
        case when i % 10 < 6 and i % 2 = 0 then 'l' || i end
      from generate_series(1, ${NODES}) as i`;
    await sql`insert into declaration_bodies (hash, resources) values ('empty', '[]'::jsonb)`;
    await sql`insert into declarations (node_id, version, hash, roles) select id, 2, 'empty', '["base"]'::jsonb from nodes`;
    await sql`analyze`;
    const deps = { db: database.db };
    const time = async (label: string, fn: () => Promise<unknown>) => {
      const { figures } = await timeRuns(RUNS, fn);
      console.log(`LIST ${NODES} nodes, ${label}: ${figures}`);
    };
    await time("node.list sort lastSeenAt desc (derived)", () => listNodes(deps, { sort: "lastSeenAt", order: "desc", limit: 50 }));
    await time("node.list sort lastSeenAt asc (derived)", () => listNodes(deps, { sort: "lastSeenAt", order: "asc", limit: 50 }));
    await time("node.list sort name (default)", () => listNodes(deps, {}));
    // Health (issue 13): one CASE over the node's own columns, so filter, sort and counts stay one query each.
    await sql`update nodes set error_count = 1 where name like '%3'`;
    await sql`analyze nodes`;
    await time("node.list sort health (worst first)", () => listNodes(deps, { sort: "health", limit: 50 }));
    await time("node.list filter health=failing", () => listNodes(deps, { health: "failing", limit: 50 }));
    await time("node.list filter labels tier=web", () => listNodes(deps, { labels: ["tier=web"], limit: 50 }));
    await time("node.counts (state x health, one grouped query)", () => countNodes(deps));
    // The stored column alone, as node.list sorted before (its index): the page query only.
    await time("page query on stored last_seen_at (old sort)", () =>
      database.db.select({ id: nodes.id, lastSeenAt: nodes.lastSeenAt }).from(nodes).orderBy(desc(nodes.lastSeenAt), asc(nodes.id)).limit(50),
    );
    await close();
  });
});
