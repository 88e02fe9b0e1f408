// Liveness costs nothing while nothing changes (issue 11), through a real gateway, a real database and
// ws clients speaking the real protocol: idle links and unchanged reports write no node row (a row's
// xmin changes with every write to it), a connected node's last seen is its gateway's heartbeat, and
// links coming up together share a few transactions (rows written by one transaction share its xmin).
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import postgres from "postgres";
import { and, eq, inArray, sql } from "drizzle-orm";
import { events, gateways, latestReports, nodes, reportHistory } from "@mesh/db";
import { testEngines, type TestDatabase } from "@mesh/db/testing";
import { useServiceDeps } from "../testing/service-deps";
import { testReport } from "../testing/host-facts";
import { CloseCode } from "@mesh/protocol";
import type { Deps } from "../deps";
import { getNode } from "../services/get-node";
import { enrolRawHosts, openRawLink, sendReport, startTestGateway, type RawHost, type TestGateway } from "../testing/raw-hosts";

describe.each(testEngines())("liveness through the gateway on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let base: string;
  // A small pool on Postgres (see createTestDatabase).
  useServiceDeps(engine, (d, db) => ((deps = d), (t = db)), { maxConnections: 8 });

  let served: TestGateway | undefined;
  const start = async (options: { pingIntervalMs?: number; presenceWindowMs?: number; presenceBatchItems?: number; gatewayId: string }) => {
    served = await startTestGateway(deps, t.database.bus, {
      reportIntervalMs: 0,
      ...options,
    });
    base = served.base;
  };
  const stop = () => served?.close();
  const enrol = (count: number) => enrolRawHosts(deps, count);
  const open = (host: RawHost) => openRawLink(base, host);
  let seq = 0;
  // The same state every time; only the reconcile time moves, as a host's timer report does.
  const report = async (ws: WebSocket) => {
    const mine = ++seq;
    await sendReport(ws, mine, testReport(1, { reconciledAt: new Date(Date.now() + mine).toISOString() }));
  };
  const pings = (ws: WebSocket, count: number) =>
    new Promise<void>((resolve, reject) => {
      let n = 0;
      ws.on("ping", () => ++n === count && resolve());
      ws.once("close", (code) => reject(new Error(`link closed (${code}) after ${n} pings`)));
    });
  /** Holds ACCESS EXCLUSIVE locks on nodes and latest_reports in another session until released: any statement on them waits. */
  const holdTablesLocked = async (sql: postgres.Sql) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const done = sql
      .begin(async (tx) => {
        await tx`lock table nodes, latest_reports in access exclusive mode`;
        locked();
        await released;
        throw new Error("rollback");
      })
      .catch(() => {});
    await isLocked;
    return async () => (release(), await done);
  };
  const rowVersions = async (ids: string[]) => {
    const rows = await deps.db
      .select({ id: nodes.id, xmin: sql<string>`${nodes}.xmin::text`, lastCheckedAt: nodes.lastCheckedAt })
      .from(nodes)
      .where(inArray(nodes.id, ids))
      .orderBy(nodes.id);
    const reports = await deps.db
      .select({ id: latestReports.nodeId, xmin: sql<string>`${latestReports}.xmin::text` })
      .from(latestReports)
      .where(inArray(latestReports.nodeId, ids))
      .orderBy(latestReports.nodeId);
    const [history] = await deps.db.select({ n: sql<number>`count(*)::int` }).from(reportHistory).where(inArray(reportHistory.nodeId, ids));
    return { nodes: rows, reports, history: history!.n };
  };

  it("writes no node row while links idle and reports come unchanged; last checked advances in one batched write", async () => {
    await start({ gatewayId: "gw-idle", pingIntervalMs: 500 });
    try {
      const hosts = await enrol(5);
      const sockets = await Promise.all(hosts.map(open));
      const ids = hosts.map((h) => h.nodeId);
      // The first report on a link is compared with the database (here: stored, a change).
      await Promise.all(sockets.map(report));
      const settled = await rowVersions(ids);
      expect(settled.reports).toHaveLength(5);
      expect(settled.nodes.every((n) => n.lastCheckedAt !== null)).toBe(true);

      // Idle: many ping rounds answered; nothing written to the nodes.
      await Promise.all(sockets.map((ws) => pings(ws, 3)));
      expect(await rowVersions(ids)).toEqual(settled);
      // Connected: last seen is the gateway's heartbeat, though the node row was not written.
      const [gw] = await deps.db.select({ heartbeatAt: gateways.heartbeatAt }).from(gateways).where(eq(gateways.id, "gw-idle"));
      expect((await getNode(deps, ids[0]!)).lastSeenAt).toEqual(gw!.heartbeatAt);

      // Ten unchanged reports per host: acked, and nothing written (not the node, not its report, no history).
      // On Postgres, with the node and report tables locked by another session: acked without a database call.
      const locker = t.url ? postgres(t.url, { max: 1, onnotice: () => {} }) : undefined;
      const release = locker && (await holdTablesLocked(locker));
      for (let i = 0; i < 10; i++) await Promise.all(sockets.map(report));
      await release?.();
      await locker?.end();
      expect(await rowVersions(ids)).toEqual(settled);

      // The checked flush (here: the gateway's close) writes last checked for all of them, in one transaction.
      for (const ws of sockets) ws.close();
      await stop();
      const after = await rowVersions(ids);
      expect(after.reports).toEqual(settled.reports);
      expect(after.history).toBe(settled.history);
      for (const [i, n] of after.nodes.entries()) expect(n.lastCheckedAt!.getTime()).toBeGreaterThan(settled.nodes[i]!.lastCheckedAt!.getTime());
    } finally {
      await stop();
    }
  });

  it("writes 100 links coming up together in a handful of transactions; one revoked meanwhile is refused and closed", { timeout: 120_000 }, async () => {
    // No window: the batch is written when its 100th connect arrives, so the revoke below lands before it.
    await start({ gatewayId: "gw-burst", presenceWindowMs: 600_000, presenceBatchItems: 100 });
    try {
      const hosts = await enrol(100);
      const ids = hosts.map((h) => h.nodeId);
      const sockets = await Promise.all(hosts.slice(0, 99).map(open));
      const victim = sockets[7]!;
      const closed = new Promise<number>((resolve) => victim.once("close", (code) => resolve(code)));
      // Revoked between its handshake and its connect's write (no close notice: the write itself must refuse it).
      await deps.db.update(nodes).set({ state: "revoked" }).where(eq(nodes.id, ids[7]!));
      sockets.push(await open(hosts[99]!));
      expect(await closed).toBe(CloseCode.revoked);
      for (const ws of sockets) ws.on("error", () => {});
      await Promise.all(sockets.filter((ws) => ws !== victim).map(report));
      const rows = await deps.db
        .select({ id: nodes.id, state: nodes.state, gatewayId: nodes.gatewayId, xmin: sql<string>`${nodes}.xmin::text` })
        .from(nodes)
        .where(inArray(nodes.id, ids));
      expect(rows.filter((r) => r.state === "enrolled" && r.gatewayId === "gw-burst")).toHaveLength(99);
      expect(rows.find((r) => r.id === ids[7])).toMatchObject({ state: "revoked", gatewayId: null });
      // Their connect events: one multi-row insert per batch (rows written together share one xmin).
      const connects = await deps.db
        .select({ xmin: sql<string>`${events}.xmin::text` })
        .from(events)
        .where(and(eq(events.action, "node.connect"), inArray(events.nodeId, ids)));
      expect(connects).toHaveLength(99);
      expect(new Set(connects.map((e) => e.xmin)).size).toBeLessThanOrEqual(3);
      for (const ws of sockets) ws.close();
    } finally {
      await stop();
    }
  });
});
