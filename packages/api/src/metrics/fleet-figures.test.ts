// The fleet figures a scrape shows cost one grouped count per window, whatever the number of scrapes
// or nodes, and land in the registry's text (nodes per state, the health spot).
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { useServiceDeps } from "../testing/service-deps";
import { countingDb } from "../testing/counting-db";
import { createToken } from "../services/tokens";
import { enrolNode } from "../services/enrol-node";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { fleetFigures } from "./fleet-figures";
import { metrics, setNodeHealthCounts } from "./metrics";

describe.each(testEngines())("fleet figures on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  it("counts nodes per state and health in one query per window, shared by concurrent scrapes", async () => {
    for (let i = 0; i < 3; i++) {
      const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: {} });
      await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() });
    }
    const counting = countingDb(deps.db);
    const refresh = fleetFigures({ db: counting.db }, 60_000);
    await Promise.all([refresh(), refresh(), refresh()]);
    await refresh();
    expect(counting.count()).toBe(1);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^mesh_nodes\{state="disconnected"\} 3$/m);
    expect(text).toMatch(/^mesh_nodes\{state="revoked"\} 0$/m);
    // Health from the same query: enrolled, never linked.
    expect(text).toMatch(/^mesh_nodes_health\{health="pending"\} 3$/m);
    // Past the window: one more query.
    const again = fleetFigures({ db: counting.db }, 0);
    await again();
    expect(counting.count()).toBe(2);
  });

  it("shows nodes per health from a counts map (the spot for node health)", async () => {
    setNodeHealthCounts({ healthy: 7, failing: 2 });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^mesh_nodes_health\{health="healthy"\} 7$/m);
    expect(text).toMatch(/^mesh_nodes_health\{health="failing"\} 2$/m);
  });
});
