// Presence under load (issue 11): the last_seen flush never deadlocks with a fleet recompile,
// an older link's late close never undoes a newer link's connect, a swept gateway claims its links back.
import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { gateways, nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "./create-token";
import { enrolNode } from "./enrol-node";
import { getNode } from "./get-node";
import { upsertRole } from "./roles";
import { beatGateway, markConnected, markDisconnected, reassertLinks, sweepDeadGateways, touchLastSeen } from "./presence";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

describe.each(testEngines())("presence on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (labels: Record<string, string> = {}) => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels } });
    return (await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() })).nodeId;
  };

  it("flushes last_seen while fleet recompiles run, many times, without a deadlock", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(await enrol({ tier: "busy" }));
    for (let round = 0; round < 15; round++) {
      const recompile = upsertRole(deps, {
        actor: "test",
        input: { name: "busy", selector: { labels: { tier: "busy" } }, resources: [{ type: "file", id: "f", path: "/etc/busy", content: `round ${round}\n` }] },
      });
      // Flushes in both orders, overlapping the recompile's row locks taken one by one in id order.
      const flushes = [touchLastSeen(deps, ids), touchLastSeen(deps, [...ids].reverse()), touchLastSeen(deps, ids)];
      const [result, ...skipped] = await Promise.all([recompile, ...flushes]);
      expect(result).toBeTruthy();
      for (const s of skipped) expect(ids).toEqual(expect.arrayContaining(s));
    }
  });

  it("does not let an older link's late close mark gone a node a newer link on the same gateway holds", async () => {
    const nodeId = await enrol();
    expect(await markConnected(deps, nodeId, "gw-1", "0.1.0", {}, undefined, "link-old")).toBe(true);
    // The new link's connect is written first; the old link's close, from its own queue, comes after.
    expect(await markConnected(deps, nodeId, "gw-1", "0.1.0", {}, undefined, "link-new")).toBe(true);
    await markDisconnected(deps, nodeId, "gw-1", "close 4000", {}, "link-old");
    expect((await getNode(deps, nodeId)).state).toBe("enrolled");
    await markDisconnected(deps, nodeId, "gw-1", "close 1000", {}, "link-new");
    expect((await getNode(deps, nodeId)).state).toBe("disconnected");
  });

  it("lets a gateway swept as dead by another claim back the links it still holds, in one statement", async () => {
    const held = [await enrol(), await enrol(), await enrol()];
    const elsewhere = await enrol();
    expect(await beatGateway(deps, "gw-slow")).toBe(false);
    expect(await beatGateway(deps, "gw-slow")).toBe(true);
    await beatGateway(deps, "gw-other");
    for (const [i, nodeId] of held.entries()) await markConnected(deps, nodeId, "gw-slow", "0.1.0", {}, undefined, `l${i}`);
    // gw-slow's beat came late (a push kept its loop busy): gw-other sweeps it.
    await deps.db.update(gateways).set({ heartbeatAt: sql`now() - interval '10 minutes'` }).where(eq(gateways.id, "gw-slow"));
    expect((await sweepDeadGateways(deps, 60_000)).sort()).toEqual([...held].sort());
    // Meanwhile one host moved to the other gateway: that one is not claimed back.
    await markConnected(deps, held[2]!, "gw-other", "0.1.0", {}, undefined, "l-moved");
    expect(await beatGateway(deps, "gw-slow")).toBe(false);
    const links = held.map((nodeId, i) => ({ nodeId, linkId: `l${i}` })).concat([{ nodeId: elsewhere, linkId: "never-connected" }]);
    const reasserted = await reassertLinks(deps, "gw-slow", links);
    expect(reasserted.sort()).toEqual([held[0], held[1], elsewhere].sort());
    const rows = await deps.db.select({ id: nodes.id, state: nodes.state, gatewayId: nodes.gatewayId, linkId: nodes.linkId }).from(nodes);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(held[0]!)).toMatchObject({ state: "enrolled", gatewayId: "gw-slow", linkId: "l0" });
    expect(byId.get(held[2]!)).toMatchObject({ state: "enrolled", gatewayId: "gw-other", linkId: "l-moved" });
    // Its links' own closes still mark their nodes gone.
    await markDisconnected(deps, held[1]!, "gw-slow", "close 1000", {}, "l1");
    expect((await getNode(deps, held[1]!)).state).toBe("disconnected");
  });
});
