// Bulk actions under load: a bulk label edit takes its row locks in the fleet's id order, so it never
// deadlocks with the presence and report batches that lock their rows in id order too.
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "./create-token";
import { enrolNode } from "./enrol-node";
import { getNode } from "./get-node";
import { upsertRole } from "./roles";
import { touchLastChecked } from "./presence";
import { writeTransitions } from "./presence-batch";
import { bulkSetLabels } from "./bulk-actions";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

describe.each(testEngines())("bulk actions under load on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (labels: Record<string, string> = {}) => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels } });
    return (await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() })).nodeId;
  };

  it("sets labels on some nodes while presence batches and the checked flush run, many times, without a deadlock", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(await enrol({ tier: "busy" }));
    ids.sort();
    await upsertRole(deps, { actor: "test", input: { name: "busy", selector: { labels: { tier: "busy" } }, resources: [{ type: "file", id: "f", path: "/etc/busy", content: "x\n" }] } });
    // The named nodes are the highest ids: locking them first and then sweeping the fleet from the lowest
    // id up is the order that deadlocks with a batch locking the whole fleet in id order.
    const named = ids.slice(-10);
    for (let round = 0; round < 15; round++) {
      const bulk = bulkSetLabels(deps, { actor: "test", input: { ids: named, set: { round: String(round) } } });
      const transitions = [
        writeTransitions(deps, "gw-a", ids.map((nodeId) => ({ nodeId, hostVersion: "0.1.0", linkId: `a${round}` })), []),
        writeTransitions(deps, "gw-b", [], ids.map((nodeId) => ({ nodeId, reason: "close", linkId: `a${round}` }))),
      ];
      const flushes = [touchLastChecked(deps, ids), touchLastChecked(deps, [...ids].reverse())];
      const [result] = await Promise.all([bulk, ...transitions, ...flushes]);
      expect(result).toMatchObject({ nodes: named.length });
    }
    expect((await getNode(deps, named[0]!)).labels).toEqual({ tier: "busy", round: "14" });
  });
});
