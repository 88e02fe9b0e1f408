// Presence under load (issue 11): batched transitions and the "last checked" flush never deadlock with a
// fleet recompile, an older link's late close never undoes a newer link's connect, a swept gateway claims
// its links back, many transitions share one transaction, and last seen is derived from the gateway's beat.
import { describe, expect, it } from "vitest";
import { and, eq, inArray, sql } from "drizzle-orm";
import { events, gateways, nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { getNode } from "./get-node";
import { upsertRole } from "./roles";
import { listNodes } from "./list-nodes";
import { revokeNode } from "./lifecycle";
import { beatGateway, markConnected, markDisconnected, reassertLinks, sweepDeadGateways, touchLastChecked } from "./presence";
import { PresenceBatcher, writeTransitions } from "./presence-batch";
import { testKeyPair } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { enrolTestNode } from "../testing/test-nodes";

/** A sweeper that has been beating for ever: only the swept gateway's own silence counts. */
const LONG_AGO = new Date(0);

describe.each(testEngines())("presence on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (labels: Record<string, string> = {}) => (await enrolTestNode(deps, { labels })).nodeId;

  it("writes batched transitions and last checked while fleet recompiles run, many times, without a deadlock", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(await enrol({ tier: "busy" }));
    const shuffled = () => [...ids].sort(() => Math.random() - 0.5);
    for (let round = 0; round < 15; round++) {
      const recompile = upsertRole(deps, {
        actor: "test",
        input: { name: "busy", selector: { labels: { tier: "busy" } }, resources: [{ type: "file", id: "f", path: "/etc/busy", content: `round ${round}\n` }] },
      });
      // Two gateways' batches in random orders, and the checked flush, overlapping the recompile's row locks.
      const half = shuffled();
      const transitions = [
        writeTransitions(
          deps,
          "gw-a",
          half.slice(0, 30).map((nodeId) => ({ nodeId, hostVersion: "0.1.0", linkId: `a${round}` })),
          half.slice(30).map((nodeId) => ({ nodeId, reason: "close", linkId: `a${round - 1}` })),
        ),
        writeTransitions(
          deps,
          "gw-b",
          half.slice(30).map((nodeId) => ({ nodeId, hostVersion: "0.1.0", linkId: `b${round}` })),
          half.slice(0, 30).map((nodeId) => ({ nodeId, reason: "close", linkId: `b${round - 1}` })),
        ),
      ];
      const flushes = [touchLastChecked(deps, ids), touchLastChecked(deps, [...ids].reverse())];
      const [result, ...rest] = await Promise.all([recompile, ...transitions, ...flushes]);
      expect(result).toBeTruthy();
      for (const s of rest.slice(2) as string[][]) expect(ids).toEqual(expect.arrayContaining(s));
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
    expect((await beatGateway(deps, "gw-slow")).kept).toBe(false);
    expect((await beatGateway(deps, "gw-slow")).kept).toBe(true);
    await beatGateway(deps, "gw-other");
    for (const [i, nodeId] of held.entries()) await markConnected(deps, nodeId, "gw-slow", "0.1.0", {}, undefined, `l${i}`);
    // gw-slow's beat came late (a push kept its loop busy): gw-other sweeps it.
    await deps.db.update(gateways).set({ heartbeatAt: sql`now() - interval '10 minutes'` }).where(eq(gateways.id, "gw-slow"));
    expect((await sweepDeadGateways(deps, 60_000, LONG_AGO)).sort()).toEqual([...held].sort());
    // Their events are written in the sweep's one transaction (rows written by one transaction share its xmin).
    const released = await deps.db
      .select({ xmin: sql<string>`${events}.xmin::text` })
      .from(events)
      .where(and(eq(events.action, "node.disconnect"), eq(events.actor, "control-plane"), inArray(events.nodeId, held)));
    expect(released).toHaveLength(3);
    expect(new Set(released.map((e) => e.xmin)).size).toBe(1);
    // Meanwhile one host moved to the other gateway: that one is not claimed back.
    await markConnected(deps, held[2]!, "gw-other", "0.1.0", {}, undefined, "l-moved");
    expect((await beatGateway(deps, "gw-slow")).kept).toBe(false);
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

  it("counts a gateway's silence only while the sweeper itself was beating (after a database outage)", async () => {
    const held = await enrol();
    await beatGateway(deps, "gw-quiet");
    await markConnected(deps, held, "gw-quiet", "0.1.0", {}, undefined, "l-quiet");
    // Both gateways were cut off from the database for ten minutes; the sweeper's first beat back is now.
    await deps.db.update(gateways).set({ heartbeatAt: sql`now() - interval '10 minutes'` }).where(eq(gateways.id, "gw-quiet"));
    const back = (await beatGateway(deps, "gw-back")).at;
    expect(await sweepDeadGateways(deps, 60_000, back)).toEqual([]);
    expect(await getNode(deps, held)).toMatchObject({ state: "enrolled", gatewayId: "gw-quiet" });
    // Had the sweeper been beating all along (or a full stale window since it came back), that silence is death.
    const stillQuiet = new Date(back.getTime() - 61_000);
    expect(await sweepDeadGateways(deps, 60_000, stillQuiet)).toEqual([held]);
    expect(await getNode(deps, held)).toMatchObject({ state: "disconnected", gatewayId: null });
  });

  it("writes 100 concurrent connects in a handful of transactions, refusing a revoked node and a re-keyed one", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await enrol());
    const keys = new Map(
      (await deps.db.select({ id: nodes.id, publicKey: nodes.publicKey }).from(nodes).where(inArray(nodes.id, ids))).map((r) => [r.id, r.publicKey]),
    );
    const [revoked, rekeyed] = ids;
    await revokeNode(deps, { actor: "test", id: revoked! });
    const batcher = new PresenceBatcher(deps, "gw-batch");
    const results = await Promise.all(
      ids.map((nodeId, i) =>
        batcher.connect({
          nodeId,
          hostVersion: "0.2.0",
          linkId: `l${i}`,
          publicKey: nodeId === rekeyed ? testKeyPair().publicKey : keys.get(nodeId),
          audit: { audit: i % 10 !== 9 },
        }),
      ),
    );
    expect(batcher.batches).toBeLessThanOrEqual(3);
    expect(results.filter((r) => !r)).toHaveLength(2);
    expect(results[0]).toBe(false);
    expect(results[1]).toBe(false);
    const rows = await deps.db
      .select({ id: nodes.id, state: nodes.state, gatewayId: nodes.gatewayId, linkId: nodes.linkId, hostVersion: nodes.hostVersion })
      .from(nodes)
      .where(inArray(nodes.id, ids));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(revoked!)).toMatchObject({ state: "revoked", gatewayId: null });
    expect(byId.get(rekeyed!)).toMatchObject({ state: "disconnected", gatewayId: null });
    expect(byId.get(ids[42]!)).toMatchObject({ state: "enrolled", gatewayId: "gw-batch", linkId: "l42", hostVersion: "0.2.0" });
    // Each accepted connect keeps its own audit event, within its budget (every tenth one had spent it).
    const connects = await deps.db.select({ nodeId: events.nodeId }).from(events).where(eq(events.action, "node.connect"));
    const audited = new Set(connects.map((e) => e.nodeId));
    expect(ids.filter((id) => audited.has(id))).toHaveLength(ids.filter((_, i) => i > 1 && i % 10 !== 9).length);
    // Disconnects batch alike; an old link's close in the same batch as its node's new link is no disconnect.
    const closes = await Promise.all([
      ...ids.slice(2, 50).map((nodeId) => batcher.disconnect({ nodeId, reason: "close 1000", linkId: `l${ids.indexOf(nodeId)}` })),
      batcher.connect({ nodeId: ids[60]!, hostVersion: "0.2.0", linkId: "l60-new" }),
      batcher.disconnect({ nodeId: ids[60]!, reason: "close 4000", linkId: "l60" }),
    ]);
    expect(closes.at(-2)).toBe(true);
    const after = new Map(
      (await deps.db.select({ id: nodes.id, state: nodes.state, linkId: nodes.linkId }).from(nodes).where(inArray(nodes.id, ids))).map((r) => [r.id, r]),
    );
    expect(after.get(ids[2]!)).toMatchObject({ state: "disconnected", linkId: null });
    expect(after.get(ids[60]!)).toMatchObject({ state: "enrolled", linkId: "l60-new" });
    expect(batcher.batches).toBeLessThanOrEqual(6);
  });

  it("shows a connected node's last seen as its gateway's heartbeat, and the disconnect time after", async () => {
    const nodeId = await enrol();
    const idle = await enrol();
    await beatGateway(deps, "gw-seen");
    await markConnected(deps, nodeId, "gw-seen", "0.1.0", {}, undefined, "l-seen");
    const [{ xmin: before }] = (await deps.db.select({ xmin: sql<string>`xmin::text` }).from(nodes).where(eq(nodes.id, nodeId))) as [{ xmin: string }];
    // The gateway beats; the node's row is not written, yet its last seen follows the beat.
    const beat = new Date(Date.now() + 3_600_000);
    await deps.db.update(gateways).set({ heartbeatAt: beat }).where(eq(gateways.id, "gw-seen"));
    expect((await getNode(deps, nodeId)).lastSeenAt).toEqual(beat);
    const page = await listNodes(deps, { sort: "lastSeenAt", order: "desc", limit: 500 });
    // Newest first (never-seen nodes sort first, as before): the beat is the newest time there is.
    expect(page.items.find((n) => n.lastSeenAt !== null)).toMatchObject({ id: nodeId, lastSeenAt: beat });
    expect(page.items.find((n) => n.id === idle)?.lastSeenAt).toBeNull();
    const [{ xmin: after }] = (await deps.db.select({ xmin: sql<string>`xmin::text` }).from(nodes).where(eq(nodes.id, nodeId))) as [{ xmin: string }];
    expect(after).toBe(before);
    // Gone: the time of its disconnect, no longer the beat.
    await markDisconnected(deps, nodeId, "gw-seen", "close 1000", {}, "l-seen");
    const gone = (await getNode(deps, nodeId)).lastSeenAt;
    expect(gone).not.toBeNull();
    expect(gone!.getTime()).toBeLessThan(beat.getTime());
    // Released by a sweep: last seen is the dead gateway's last beat.
    await markConnected(deps, nodeId, "gw-seen", "0.1.0", {}, undefined, "l-seen-2");
    const lastBeat = new Date(Date.now() - 3_600_000);
    await deps.db.update(gateways).set({ heartbeatAt: lastBeat }).where(eq(gateways.id, "gw-seen"));
    expect(await sweepDeadGateways(deps, 60_000, LONG_AGO)).toContain(nodeId);
    const released = await getNode(deps, nodeId);
    expect(released).toMatchObject({ state: "disconnected", gatewayId: null, lastSeenAt: lastBeat });
  });
});
