// Grants on a fleet-wide path: a role declaring a grant for many nodes issues one credential
// per node in a number of statements that does not grow with the nodes, records one summary
// event per kind, and a role that stops declaring it revokes them all the same way.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { eq, isNull, like, sql } from "drizzle-orm";
import { events, grants, nodes } from "@mesh/db";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { GrantDeclaration } from "@mesh/protocol";
import type { Deps } from "../deps";
import { createSecretBox } from "../secrets/secret-box";
import { upsertRole } from "../services/roles";
import { countingDb } from "../testing/counting-db";
import { memoryGrantProvider } from "../testing/memory-grant-provider";
import { enrolRawHosts } from "../testing/raw-hosts";
import { ensureGrants, ensureNodeGrants } from "./ensure-node-grants";
import { settleGrants } from "./settle-grants";

const NODES = 40;
// As a role stores it (defaults filled in): an equal spec keeps the grant, another re-issues it.
const grant = GrantDeclaration.parse({ id: "shop-db", provider: "postgres", path: "/etc/shop/db.env", access: "read" });

describe.each(testEngines())("grants for many nodes at once (%s)", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let mem: ReturnType<typeof memoryGrantProvider>;
  let nodeIds: string[];
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    mem = memoryGrantProvider();
    deps = { db: t.database.db, log: pino({ level: "silent" }), grants: { providers: { postgres: mem.provider }, secrets: createSecretBox(randomBytes(32)) } };
    nodeIds = (await enrolRawHosts(deps, NODES)).map((h) => h.nodeId);
  });
  afterAll(() => t?.drop());

  const eventsOf = (action: string) => deps.db.select().from(events).where(eq(events.action, action));

  it("issues, keeps and revokes every node's grant in a bounded number of statements", async () => {
    const counting = countingDb(deps.db);
    const files = await ensureGrants(
      counting.db,
      deps.grants,
      nodeIds.map((nodeId) => ({ nodeId, declared: [grant] })),
      "test",
    );
    // read held, delete replaced principals, insert, one event, one notification
    expect(counting.count()).toBeLessThanOrEqual(5);
    expect(files.size).toBe(NODES);
    const credentials = new Set([...files.values()].map((f) => JSON.stringify(f)));
    expect(credentials.size).toBe(NODES); // one credential per node
    const issued = await eventsOf("grant.issue");
    expect(issued).toHaveLength(1);
    expect(issued[0]!.data).toMatchObject({ grants: NODES, nodes: NODES });

    const again = countingDb(deps.db);
    const kept = await ensureGrants(
      again.db,
      deps.grants,
      nodeIds.map((nodeId) => ({ nodeId, declared: [grant] })),
      "test",
    );
    expect(again.count()).toBe(1); // only the read: nothing re-issued
    expect([...kept.entries()]).toEqual([...files.entries()]);

    expect(await settleGrants(deps)).toBe(0);
    expect(mem.held.size).toBe(NODES);

    const revoking = countingDb(deps.db);
    await ensureGrants(
      revoking.db,
      deps.grants,
      nodeIds.map((nodeId) => ({ nodeId, declared: [] })),
      "test",
    );
    expect(revoking.count()).toBeLessThanOrEqual(4);
    expect(await deps.db.select().from(grants).where(isNull(grants.revokedAt))).toHaveLength(0);
    const revoked = await eventsOf("grant.revoke");
    expect(revoked).toHaveLength(1);
    expect(revoked[0]!.data).toMatchObject({ grants: NODES, nodes: NODES, reason: "no longer declared" });
    expect(await settleGrants(deps)).toBe(0);
    expect(mem.held.size).toBe(0);
  });

  it("one node's grants keep their own events, and a role change compiles the fleet's grants through the same path", async () => {
    const [first] = nodeIds;
    await ensureNodeGrants(deps.db, deps.grants, first!, [grant], "test");
    const single = (await eventsOf("grant.issue")).filter((e) => e.nodeId === first);
    expect(single).toHaveLength(1);
    expect(single[0]!.target).toMatch(/^postgres:mesh_/);

    const before = new Set((await eventsOf("grant.issue")).map((e) => e.id));
    await upsertRole(deps, { actor: "test", input: { name: "shop", selector: {}, resources: [], grants: [grant] } });
    const live = await deps.db.select().from(grants).where(isNull(grants.revokedAt));
    expect(live).toHaveLength(NODES);
    // the node that already held it keeps its row; the others get theirs in one summary event
    expect(live.filter((g) => g.nodeId === first)).toHaveLength(1);
    const added = (await eventsOf("grant.issue")).filter((e) => !before.has(e.id));
    expect(added).toHaveLength(1);
    expect(added[0]!.data).toMatchObject({ grants: NODES - 1 });
  });

  it("issues grants for more nodes than one statement's parameters could carry", { timeout: 120_000 }, async () => {
    // 11,000 rows of 6 parameters each would pass the protocol's 65,535 in one INSERT.
    const many = 11_000;
    await deps.db.execute(sql`
      insert into nodes (id, name, state, labels, public_key, machine_id, profile, inventory)
      select gen_random_uuid(), 'bulk-' || i, 'enrolled', '{}'::jsonb, 'key-' || i, 'bulk-machine-' || i, '{}'::jsonb, '{}'::jsonb
      from generate_series(1, ${many}) as i`);
    const bulk = (await deps.db.select({ id: nodes.id }).from(nodes).where(like(nodes.name, "bulk-%"))).map((n) => n.id);
    expect(bulk).toHaveLength(many);
    const files = await ensureGrants(
      deps.db,
      deps.grants,
      bulk.map((nodeId) => ({ nodeId, declared: [grant] })),
      "test",
    );
    expect(files.size).toBe(many);
    const [held] = await deps.db
      .select({ n: sql<number>`count(*)::int` })
      .from(grants)
      .where(sql`${grants.nodeId} in (select id from nodes where name like 'bulk-%') and ${grants.revokedAt} is null`);
    expect(held!.n).toBe(many);
  });
});
