// A host cannot flood the audit log: one report, however much drift it carries,
// writes at most one event; the entries stay with the stored report.
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { events, nodes, reportHistory } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { recordReport } from "./record-report";
import { reportHistoryOf } from "./report-store";
import { testReport } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { enrolTestNode } from "../testing/test-nodes";

const sha = (n: number) => n.toString(16).padStart(64, "0");

describe.each(testEngines())("report events on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async () => (await enrolTestNode(deps)).nodeId;
  const report = (drifts: number, tag = "") =>
    testReport(1, {
      drift: Array.from({ length: drifts }, (_, i) => ({
        id: `r${i}`,
        type: "file" as const,
        declared: sha(i),
        observed: sha(i + 1),
        description: `content differs${tag}`,
        corrected: i % 2 === 0,
      })),
    });
  const driftEvents = (nodeId: string) =>
    deps.db
      .select()
      .from(events)
      .where(and(eq(events.nodeId, nodeId), eq(events.action, "node.drift")));

  it("writes one summary event for a report with 5,000 drift entries, and keeps the entries with the report", async () => {
    const nodeId = await enrol();
    expect(await recordReport(deps, nodeId, report(5000))).toBe(true);
    const written = await driftEvents(nodeId);
    expect(written).toHaveLength(1);
    expect(written[0]!.data).toMatchObject({ count: 5000, uncorrected: 2500, ids: expect.arrayContaining(["r0", "r19"]) });
    expect((written[0]!.data as { ids: string[] }).ids).toHaveLength(20);
    expect(JSON.stringify(written[0]!.data).length).toBeLessThan(4096);
    const [stored] = await reportHistoryOf(deps.db, [nodeId]);
    expect(stored!.report.drift).toHaveLength(5000);
  });

  it("tells the drift of reports a paced one replaced, even when the state it ended in is stored already", async () => {
    const nodeId = await enrol();
    const clean = report(0);
    expect(await recordReport(deps, nodeId, clean)).toBe(true);
    const carriedDrift = report(2, "seen").drift;
    expect(await recordReport(deps, nodeId, { ...clean, reconciledAt: new Date(Date.now() + 5000).toISOString() }, { carriedDrift })).toBe(false);
    const written = await driftEvents(nodeId);
    expect(written).toHaveLength(1);
    expect(written[0]!.data).toMatchObject({ count: 2, ids: ["r0", "r1"] });
  });

  it("takes a report sent again (its origin at or below the stored one) as stored: no second write, no second event, not even as carried drift", async () => {
    const nodeId = await enrol();
    const stream = "ab".repeat(8);
    const drifted = { ...report(2, "fixed"), origin: { stream, sequence: 3 } };
    expect(await recordReport(deps, nodeId, drifted)).toBe(true);
    // The ack was lost: the host sends it again, then a later report carrying its drift (paced at a gateway).
    expect(await recordReport(deps, nodeId, { ...drifted, reconciledAt: new Date(Date.now() + 1000).toISOString() })).toBe(false);
    const later = { ...report(0), origin: { stream, sequence: 4 } };
    expect(await recordReport(deps, nodeId, later, { carriedDrift: drifted.drift, carriedFrom: { r0: drifted.origin, r1: drifted.origin } })).toBe(true);
    expect(await driftEvents(nodeId)).toHaveLength(1);
    expect(await deps.db.select().from(reportHistory).where(eq(reportHistory.nodeId, nodeId))).toHaveLength(2);
    // Drift carried from a report not stored yet is told; a new stream (a host that lost its state) is not old.
    const unstored = { ...report(1, "new"), origin: { stream, sequence: 5 } };
    expect(
      await recordReport(
        deps,
        nodeId,
        { ...report(0, "x"), declarationVersion: 2, origin: { stream, sequence: 6 } },
        { carriedDrift: unstored.drift, carriedFrom: { r0: unstored.origin } },
      ),
    ).toBe(true);
    expect(await recordReport(deps, nodeId, { ...report(1, "again"), origin: { stream: "cd".repeat(8), sequence: 0 } })).toBe(true);
    expect(await driftEvents(nodeId)).toHaveLength(3);
  });

  it("writes no event when the node's budget is spent, and says how many were left out in the next", async () => {
    const nodeId = await enrol();
    expect(await recordReport(deps, nodeId, report(3, "a"), { driftEvent: false })).toBe(true);
    expect(await driftEvents(nodeId)).toHaveLength(0);
    expect(await recordReport(deps, nodeId, report(3, "b"), { suppressedDriftEvents: 1 })).toBe(true);
    const written = await driftEvents(nodeId);
    expect(written).toHaveLength(1);
    expect(written[0]!.data).toMatchObject({ count: 3, suppressedEvents: 1 });
  });

  it("writes node.store-lost when it turns on, not with every report that still says so (and within the caller's budget)", async () => {
    const nodeId = await enrol();
    const storeLostEvents = () =>
      deps.db
        .select()
        .from(events)
        .where(and(eq(events.nodeId, nodeId), eq(events.action, "node.store-lost")));
    for (let i = 0; i < 5; i++) expect(await recordReport(deps, nodeId, { ...report(1, `lost ${i}`), storeLost: true })).toBe(true);
    expect(await storeLostEvents()).toHaveLength(1);
    expect(await recordReport(deps, nodeId, report(0))).toBe(true);
    expect(await recordReport(deps, nodeId, { ...report(0), storeLost: true }, { storeLostEvent: () => null })).toBe(true);
    expect(await storeLostEvents()).toHaveLength(1);
    expect(await recordReport(deps, nodeId, report(0))).toBe(true);
    expect(await recordReport(deps, nodeId, { ...report(1), storeLost: true }, { storeLostEvent: () => ({ suppressed: 1 }) })).toBe(true);
    const written = await storeLostEvents();
    expect(written).toHaveLength(2);
    expect(written.map((e) => e.data)).toContainEqual({ suppressedEvents: 1 });
  });

  it("takes a report from a store older than the generation stored as a store rolled back, so lost (issue 12)", async () => {
    const nodeId = await enrol();
    const storeLostEvents = () =>
      deps.db
        .select()
        .from(events)
        .where(and(eq(events.nodeId, nodeId), eq(events.action, "node.store-lost")));
    const node = async () => (await deps.db.select({ lost: nodes.storeLost, generation: nodes.storeGeneration }).from(nodes).where(eq(nodes.id, nodeId)))[0]!;
    const behind: number[] = [];
    const opts = { storeBehind: (g: number) => behind.push(g) };
    expect(await recordReport(deps, nodeId, { ...report(0), storeGeneration: 9 }, opts)).toBe(true);
    expect(await node()).toEqual({ lost: false, generation: 9 });
    // A restored backup: generation 4, the report itself says nothing is wrong.
    expect(await recordReport(deps, nodeId, { ...report(1, "old"), storeGeneration: 4 }, opts)).toBe(true);
    expect(behind).toEqual([9]);
    expect(await node()).toEqual({ lost: true, generation: 9 });
    expect((await storeLostEvents()).map((e) => e.data)).toEqual([{ rolledBack: { storeGeneration: 4, acknowledged: 9 } }]);
    // The host handles it as lost: its new store starts past the acknowledged generation, and says so once acknowledged.
    expect(await recordReport(deps, nodeId, { ...report(0), storeLost: true, storeGeneration: 11 }, opts)).toBe(true);
    expect(await recordReport(deps, nodeId, { ...report(0), storeGeneration: 12 }, opts)).toBe(true);
    expect(await node()).toEqual({ lost: false, generation: 12 });
    expect(await storeLostEvents()).toHaveLength(1);
    // A report without a generation (a host from before) changes nothing.
    expect(await recordReport(deps, nodeId, report(2, "older host"), opts)).toBe(true);
    expect(await node()).toEqual({ lost: false, generation: 12 });
    expect(behind).toEqual([9]);
  });

  it("compares a report sent again (found stored by its origin) with the generation stored: a store restored since is lost (issue 12)", async () => {
    const nodeId = await enrol();
    const storeLostEvents = () =>
      deps.db
        .select()
        .from(events)
        .where(and(eq(events.nodeId, nodeId), eq(events.action, "node.store-lost")));
    const node = async () => (await deps.db.select({ lost: nodes.storeLost, generation: nodes.storeGeneration }).from(nodes).where(eq(nodes.id, nodeId)))[0]!;
    const behind: number[] = [];
    const opts = { storeBehind: (g: number) => behind.push(g) };
    const stream = "ef".repeat(8);
    const sent = (sequence: number, storeGeneration: number) => ({ ...report(0), storeGeneration, origin: { stream, sequence } });
    expect(await recordReport(deps, nodeId, sent(19, 6), opts)).toBe(true);
    expect(await recordReport(deps, nodeId, sent(20, 7), opts)).toBe(true);
    // Acks lost, sent again as they were: stored already, and an older report's older generation is no rollback.
    expect(await recordReport(deps, nodeId, sent(19, 6), opts)).toBe(false);
    expect(await recordReport(deps, nodeId, sent(20, 7), opts)).toBe(false);
    expect(behind).toEqual([]);
    expect(await node()).toEqual({ lost: false, generation: 7 });
    // The store was restored to generation 3 since: seq 20 comes again carrying the generation the host started from.
    expect(await recordReport(deps, nodeId, sent(20, 3), opts)).toBe(false);
    expect(behind).toEqual([7]);
    expect(await node()).toEqual({ lost: true, generation: 7 });
    expect((await storeLostEvents()).map((e) => e.data)).toEqual([{ rolledBack: { storeGeneration: 3, acknowledged: 7 } }]);
    expect(await deps.db.select().from(reportHistory).where(eq(reportHistory.nodeId, nodeId))).toHaveLength(2);
  });

  it("tells again that a store is behind when a report equal to the stored one (itself behind) comes again: its ack may have been lost", async () => {
    const nodeId = await enrol();
    const behind: number[] = [];
    const opts = { storeBehind: (g: number) => behind.push(g) };
    expect(await recordReport(deps, nodeId, { ...report(0), storeGeneration: 7 }, opts)).toBe(true);
    expect(await recordReport(deps, nodeId, { ...report(1, "old"), storeGeneration: 3 }, opts)).toBe(true);
    expect(behind).toEqual([7]);
    // The same report again (a new link, the ack lost): not written, but still behind, said once more; no second event.
    expect(await recordReport(deps, nodeId, { ...report(1, "old"), storeGeneration: 3, reconciledAt: new Date(Date.now() + 1000).toISOString() }, opts)).toBe(
      false,
    );
    expect(behind).toEqual([7, 7]);
    expect(
      await deps.db
        .select()
        .from(events)
        .where(and(eq(events.nodeId, nodeId), eq(events.action, "node.store-lost"))),
    ).toHaveLength(1);
  });

  it("stores the applied version the host reports only up to the declared one, and never lower than before", async () => {
    const nodeId = await enrol();
    const applied = async () => (await deps.db.select({ v: nodes.appliedVersion, d: nodes.declaredVersion }).from(nodes).where(eq(nodes.id, nodeId)))[0]!;
    const { d: declared } = await applied();
    await recordReport(deps, nodeId, { ...report(0), declarationVersion: declared + 5 });
    expect((await applied()).v).toBe(declared);
    // A host reporting an older version (to keep the previous declaration's files downloadable) moves nothing back.
    await recordReport(deps, nodeId, { ...report(1), declarationVersion: 0 });
    expect((await applied()).v).toBe(declared);
  });
});
