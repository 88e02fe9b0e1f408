// Reports of many hosts arriving at once are stored together (issue 11), through a real gateway, a
// real database and ws clients speaking the real protocol: 200 hosts reporting at once share a few
// transactions (rows written by one transaction share its xmin), and each host gets its own ack.
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { and, eq, inArray, sql } from "drizzle-orm";
import { events, latestReports, nodes, reportHistory } from "@mesh/db";
import { testEngines, type TestDatabase } from "@mesh/db/testing";
import { useServiceDeps } from "../testing/service-deps";
import { testReport } from "../testing/host-facts";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { enrolRawHosts, openRawLink, sendReport, startTestGateway, type RawHost, type TestGateway } from "../testing/raw-hosts";
import { countingDb } from "../testing/counting-db";

describe.each(testEngines())("reports through the gateway on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let base: string;
  // A small pool on Postgres (see createTestDatabase).
  useServiceDeps(engine, (d, db) => ((deps = d), (t = db)), { maxConnections: 8 });

  let served: TestGateway | undefined;
  const start = async (options: { reportWindowMs?: number; reportBatchItems?: number; reportCheckWindowMs?: number }, db: Deps["db"] = deps.db) => {
    served = await startTestGateway({ ...deps, db }, t.database.bus, {
      gatewayId: "gw-reports",
      reportIntervalMs: 0,
      ...options,
    });
    base = served.base;
  };
  const stop = () => served?.close();
  const enrol = (count: number) => enrolRawHosts(deps, count);
  const open = (host: RawHost) => openRawLink(base, host);
  let seq = 0;
  /** Sends a report and resolves with its ack's seq. */
  const report = (ws: WebSocket, body: Report) => sendReport(ws, ++seq, body);
  const body = (i: number, driftCount: number): Report =>
    testReport(1, {
      drift: Array.from({ length: driftCount }, (_, k) => ({
        id: `r${k}`,
        type: "file" as const,
        declared: "a".repeat(64),
        observed: "b".repeat(64),
        description: `host ${i}`,
        corrected: false,
      })),
    });
  const versions = async (ids: string[]) =>
    deps.db
      .select({ id: latestReports.nodeId, xmin: sql<string>`${latestReports}.xmin::text` })
      .from(latestReports)
      .where(inArray(latestReports.nodeId, ids));

  it("stores 200 hosts' reports, sent at once, in a handful of transactions, and acks each", { timeout: 180_000 }, async () => {
    // A batch is written when its 100th report arrives. While it commits, the loop writes what has
    // arrived meanwhile (the next batch grows while the last one commits); reports that arrive after
    // the loop ran dry and number fewer than 100 wait for the window (2 s, longer than the burst takes
    // here, so it is not what batches them): two batches on a fast machine, a few more on a slow one.
    // (With a window of minutes, a slow machine left the last few dozen waiting past the test's end.)
    await start({ reportWindowMs: 2_000, reportBatchItems: 100 });
    try {
      const hosts = await enrol(200);
      const ids = hosts.map((h) => h.nodeId);
      const sockets = await Promise.all(hosts.map(open));
      // Every other host reports drift: its event is written with the batch.
      const acks = await Promise.all(sockets.map((ws, i) => report(ws, body(i, i % 2))));
      expect(new Set(acks).size).toBe(200);
      const stored = await versions(ids);
      expect(stored).toHaveLength(200);
      expect(new Set(stored.map((r) => r.xmin)).size).toBeLessThanOrEqual(5);
      const [history] = await deps.db.select({ n: sql<number>`count(*)::int` }).from(reportHistory).where(inArray(reportHistory.nodeId, ids));
      expect(history!.n).toBe(200);
      const drift = await deps.db
        .select({ nodeId: events.nodeId })
        .from(events)
        .where(and(eq(events.action, "node.drift"), inArray(events.nodeId, ids)));
      expect(drift).toHaveLength(100);
      const figures = await deps.db.select({ drift: nodes.driftCount, checked: nodes.lastCheckedAt }).from(nodes).where(inArray(nodes.id, ids));
      expect(figures.filter((n) => n.drift === 1)).toHaveLength(100);
      expect(figures.every((n) => n.checked !== null)).toBe(true);
      for (const ws of sockets) ws.close();
    } finally {
      await stop();
    }
  });

  it("a report other than the one its link stored goes straight to its transaction, with no read of the stored hash first", async () => {
    const counted = countingDb(deps.db);
    // No catch-up comparison in the window (a report not of a version just sent asks for one).
    await start({ reportCheckWindowMs: 60_000 }, counted.db);
    try {
      const [host] = await enrol(1);
      const ws = await open(host!);
      // The link's first report: nothing known stored, read first, then written.
      await report(ws, body(0, 0));
      await new Promise((r) => setTimeout(r, 300)); // the link-up's presence write settles
      const before = counted.count();
      // Another report (different drift): its link stored the first, so it is known to differ.
      await report(ws, body(0, 1));
      expect(counted.count() - before).toBe(1); // the transaction alone
      const [stored] = await deps.db.select({ drift: nodes.driftCount }).from(nodes).where(eq(nodes.id, host!.nodeId));
      expect(stored!.drift).toBe(1);
      ws.close();
    } finally {
      await stop();
    }
  });

  it("with the default window, a burst of changed reports shares few transactions; unchanged ones after a reconnect write nothing", {
    timeout: 180_000,
  }, async () => {
    await start({});
    try {
      const hosts = await enrol(50);
      const ids = hosts.map((h) => h.nodeId);
      let sockets = await Promise.all(hosts.map(open));
      await Promise.all(sockets.map((ws, i) => report(ws, body(i, 0))));
      const first = await versions(ids);
      expect(new Set(first.map((r) => r.xmin)).size).toBeLessThan(10);
      // Reconnected links know nothing stored: their equal reports are compared in one read and write nothing.
      for (const ws of sockets) ws.close();
      sockets = await Promise.all(hosts.map(open));
      await Promise.all(sockets.map((ws, i) => report(ws, body(i, 0))));
      expect(await versions(ids)).toEqual(first);
      for (const ws of sockets) ws.close();
    } finally {
      await stop();
    }
  });
});
