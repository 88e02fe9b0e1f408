// A node recompiled in a loop (facts toggling a role, or roles edited often) keeps a
// bounded declarations history: the newest versions, the current one always among them.
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { declarations } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { currentDeclaration, DECLARATION_HISTORY_PER_NODE } from "./declaration-store";
import { upsertRole } from "./roles";
import { updateFacts } from "./update-facts";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

describe.each(testEngines())("declarations history on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  it(`keeps the newest ${DECLARATION_HISTORY_PER_NODE} versions of a node recompiled again and again`, async () => {
    await upsertRole(deps, {
      actor: "test",
      input: { name: "big", selector: { profile: { cpus: { gte: 8 } } }, resources: [{ type: "directory", id: "big", path: "/big" }] },
    });
    const machineId = crypto.randomUUID();
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: {} });
    const { nodeId } = await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(machineId), inventory: emptyInventory() });
    const toggles = DECLARATION_HISTORY_PER_NODE + 10;
    for (let i = 0; i < toggles; i++)
      await updateFacts(deps, nodeId, { profile: testProfile(machineId, { cpus: i % 2 === 0 ? 16 : 2 }), inventory: emptyInventory() });
    const versions = (await deps.db.select({ version: declarations.version }).from(declarations).where(eq(declarations.nodeId, nodeId)))
      .map((r) => r.version)
      .sort((a, b) => a - b);
    const current = await currentDeclaration(deps.db, nodeId);
    expect(current!.version).toBeGreaterThan(toggles);
    expect(versions).toHaveLength(DECLARATION_HISTORY_PER_NODE);
    expect(versions.at(-1)).toBe(current!.version);
    expect(versions[0]).toBe(current!.version - DECLARATION_HISTORY_PER_NODE + 1);
  });
});
