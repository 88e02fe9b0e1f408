// Bulk actions under load: a bulk label edit takes its row locks in the fleet's id order, so it never
// deadlocks with the presence and report batches that lock their rows in id order too.
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { getNode } from "./get-node";
import { upsertRole } from "./roles";
import { touchLastChecked } from "./presence";
import { writeTransitions } from "./presence-batch";
import { bulkRetire, bulkSetLabels } from "./bulk-actions";
import { checkConflicts } from "./check-conflicts";
import { renameNode } from "./rename-node";
import { revokeNode } from "./lifecycle";
import { useServiceDeps } from "../testing/service-deps";
import { enrolTestNode } from "../testing/test-nodes";

describe.each(testEngines())("bulk actions under load on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (labels: Record<string, string> = {}) => (await enrolTestNode(deps, { labels })).nodeId;

  it("sets labels on some nodes while presence batches and the checked flush run, many times, without a deadlock", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(await enrol({ tier: "busy" }));
    ids.sort();
    await upsertRole(deps, {
      actor: "test",
      input: { name: "busy", selector: { labels: { tier: "busy" } }, resources: [{ type: "file", id: "f", path: "/etc/busy", content: "x\n" }] },
    });
    // The named nodes are the highest ids: locking them first and then sweeping the fleet from the lowest
    // id up is the order that deadlocks with a batch locking the whole fleet in id order.
    const named = ids.slice(-10);
    for (let round = 0; round < 15; round++) {
      const bulk = bulkSetLabels(deps, { actor: "test", input: { ids: named, set: { round: String(round) } } });
      const transitions = [
        writeTransitions(
          deps,
          "gw-a",
          ids.map((nodeId) => ({ nodeId, hostVersion: "0.1.0", linkId: `a${round}` })),
          [],
        ),
        writeTransitions(
          deps,
          "gw-b",
          [],
          ids.map((nodeId) => ({ nodeId, reason: "close", linkId: `a${round}` })),
        ),
      ];
      const flushes = [touchLastChecked(deps, ids), touchLastChecked(deps, [...ids].reverse())];
      const [result] = await Promise.all([bulk, ...transitions, ...flushes]);
      expect(result).toMatchObject({ nodes: named.length });
    }
    expect((await getNode(deps, named[0]!)).labels).toEqual({ tier: "busy", round: "14" });
  });

  it("names nodes by the name shown (the display name, else the hostname) in conflicts and state refusals", async () => {
    const named = await enrol();
    const plain = await enrol();
    await renameNode(deps, { actor: "test", input: { id: named, name: "Front door" } });
    const hostname = (await getNode(deps, plain)).hostname;
    const role = (name: string, key: string) =>
      upsertRole(deps, {
        actor: "test",
        input: { name, selector: { labels: { [key]: "1" } }, resources: [{ type: "file", id: "shown", path: "/etc/shown", content: `${name}\n` }] },
      });
    await role("shown-a", "a");
    await role("shown-b", "b");
    const check = await checkConflicts(deps.db, { labels: [named, plain].map((id) => ({ id, labels: { a: "1", b: "1" } })) });
    expect(check.conflicts).toHaveLength(1);
    expect(check.conflicts[0]!.sample.map((s) => s.name).sort()).toEqual(["Front door", hostname].sort());
    await revokeNode(deps, { actor: "test", id: named });
    await expect(bulkRetire(deps, { actor: "test", input: { ids: [named, plain] } })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("Front door is revoked"),
    });
  });
});
