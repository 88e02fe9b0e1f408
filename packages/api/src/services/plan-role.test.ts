// role.plan against a real database: what saving would create, update and remove
// per node, and that planning saves nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { listRoles, upsertRole } from "./roles";
import { planRole } from "./plan-role";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";

const profile = (machineId: string) => testProfile(machineId, { hostname: "plan-" + machineId.slice(0, 4) });
const publicKey = () => testKeyPair().publicKey;

describe.each(testEngines())("role.plan on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
    for (const tier of ["web", "db"]) {
      const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: { tier } } });
      await enrolNode(deps, { token, publicKey: publicKey(), profile: profile(crypto.randomUUID().replace(/-/g, "")), inventory: emptyInventory() });
    }
  });
  afterAll(() => t?.drop());

  const file = (id: string, content: string) => ({ type: "file" as const, id, path: `/etc/${id}`, content, mode: "0644" });

  it("lists creations for a new role on the nodes it matches, and saves nothing", async () => {
    const plan = await planRole(deps, { input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("a", "1"), file("b", "1")] } });
    expect(plan.matchedCount).toBe(1);
    expect(plan.changedCount).toBe(1);
    expect(plan.nodes[0]!.changes.map((c) => `${c.action} ${c.id}`)).toEqual(["create a", "create b"]);
    expect(await listRoles(deps)).toEqual([]);
  });

  it("lists updates and removals for a changed role", async () => {
    await upsertRole(deps, { actor: "test", input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("a", "1"), file("b", "1")] } });
    const plan = await planRole(deps, { input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("a", "2"), file("c", "1")] } });
    expect(plan.exists).toBe(true);
    expect(plan.nodes[0]!.changes.map((c) => `${c.action} ${c.id}`).sort()).toEqual(["create c", "remove b", "update a"]);
    const widened = await planRole(deps, { input: { name: "web", selector: {}, resources: [file("a", "1"), file("b", "1")] } });
    expect(widened.matchedCount).toBe(2);
    expect(widened.changedCount).toBe(1);
  });
});
