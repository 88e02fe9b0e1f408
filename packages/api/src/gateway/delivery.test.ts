// Delivery never rests on one notification (issue 12, items 1 and 7): a real gateway, a real database
// and raw ws hosts speaking the real protocol. Notifications are dropped by a bus that goes away and
// comes back (what a database restart does to LISTEN); database failures are real failing statements.
import { Writable } from "node:stream";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import type WebSocket from "ws";
import { eq, sql } from "drizzle-orm";
import { CHANNELS, grants, nodes, notify, type ChangeBus, type SubscribeOptions } from "@mesh/db";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { CloseCode, ServerFrame, type Declaration, type Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { upsertRole } from "../services/roles";
import { retireNode } from "../services/lifecycle";
import { settleGrants } from "../grants/settle-grants";
import { createSecretBox } from "../secrets/secret-box";
import { enrolRawHosts, openRawLink, sendReport, serveGateway, type RawHost } from "../testing/raw-hosts";
import { countingDb } from "../testing/counting-db";
import { memoryGrantProvider } from "../testing/memory-grant-provider";
import { createGateway, type Gateway } from "./gateway";
import { testReport } from "../testing/host-facts";

const until = async (cond: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 600; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

/** The real bus, except that while `down` every notification is lost; `back()` tells subscribers of the gap. */
function interruptibleBus(real: ChangeBus, db: Deps["db"]) {
  let down = false;
  const gaps = new Set<() => void>();
  const dropped: string[] = [];
  const bus: ChangeBus = {
    async subscribe(channel, listener, opts: SubscribeOptions = {}) {
      const unsubscribe = await real.subscribe(channel, (payload) => {
        if (!down) listener(payload);
        else dropped.push(payload);
      });
      const onGap = opts.onGap;
      if (onGap) gaps.add(onGap);
      return async () => {
        if (onGap) gaps.delete(onGap);
        await unsubscribe();
      };
    },
  };
  return {
    bus,
    away: () => (down = true),
    /** Waits until everything committed so far has reached the bus (and been lost): a marker sent now arrives after it. */
    async drain() {
      const marker = `drain-${randomBytes(4).toString("hex")}`;
      await notify(db, CHANNELS.declaration, marker);
      await until(() => dropped.includes(marker), "the bus to drain");
    },
    back: () => {
      down = false;
      gaps.forEach((g) => g());
    },
    /** Back without saying so: what a bus without gap notices did. */
    backSilently: () => (down = false),
  };
}

describe.each(testEngines())("delivery on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let gatewayDb: ReturnType<typeof countingDb>;
  let gateway: Gateway;
  let served: Awaited<ReturnType<typeof serveGateway>>;
  let bus: ReturnType<typeof interruptibleBus>;
  const mem = memoryGrantProvider();
  const logLines: string[] = [];

  beforeAll(async () => {
    t = await createTestDatabase(engine, { maxConnections: 8 });
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    deps = {
      db: t.database.db,
      log: pino({ level: "info" }, sink),
      grants: { providers: { postgres: mem.provider }, secrets: createSecretBox(randomBytes(32)) },
    };
    gatewayDb = countingDb(deps.db);
    bus = interruptibleBus(t.database.bus, deps.db);
    gateway = await createGateway({
      deps: { ...deps, db: gatewayDb.db },
      bus: bus.bus,
      pingIntervalMs: 120_000,
      lastCheckedFlushMs: 120_000,
      heartbeatMs: 120_000,
      connectsPerMinute: 1000,
      admissionsPerSecond: 100_000,
      reportIntervalMs: 0,
      reportCheckWindowMs: 50,
    });
    served = await serveGateway(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await served?.close();
    await t?.drop();
  });

  const declaredVersion = async (nodeId: string) => (await deps.db.select({ v: nodes.declaredVersion }).from(nodes).where(eq(nodes.id, nodeId)))[0]!.v;
  const file = (id: string, content: string) => ({ type: "file" as const, id, path: `/etc/${id}`, content });

  /** A linked raw host stating `version`, recording every frame as the real host parses it. */
  const link = async (host: RawHost, version: number) => {
    const ws = await openRawLink(served.base, host, version);
    const declarations: Declaration[] = [];
    const frames: ServerFrame[] = [];
    let closedWith: number | undefined;
    ws.on("message", (data) => {
      const frame = ServerFrame.parse(JSON.parse(String(data)));
      frames.push(frame);
      if (frame.type === "declaration") declarations.push(frame.declaration);
    });
    ws.on("close", (code) => (closedWith = code));
    return {
      ws,
      declarations,
      frames,
      closedWith: () => closedWith,
      has: (v: number) => declarations.some((d) => d.version >= v),
    };
  };
  let seq = 0;
  const report = (ws: WebSocket, declarationVersion: number, owned: Report["owned"] = []) =>
    sendReport(ws, ++seq, testReport(declarationVersion, { owned, reconciledAt: new Date(Date.now() + seq).toISOString() }));
  /** One host linked and holding its node's current declaration. */
  const linkedHost = async () => {
    const [host] = await enrolRawHosts(deps, 1);
    const current = await declaredVersion(host!.nodeId);
    const linked = await link(host!, current);
    await until(() => gateway.connectedNodes().includes(host!.nodeId), "the link");
    await report(linked.ws, current);
    return { host: host!, linked, current };
  };

  it("after the bus comes back from a gap, every linked host behind gets its current declaration, in a few statements whatever their number", async () => {
    const hosts = [];
    for (let i = 0; i < 10; i++) hosts.push(await linkedHost());
    bus.away();
    try {
      await upsertRole(deps, { actor: "test", input: { name: "gap", selector: {}, resources: [file("gap", "missed")] } });
      await bus.drain();
    } catch (err) {
      bus.backSilently();
      throw err;
    }
    const before = gatewayDb.count();
    bus.back();
    for (const h of hosts) {
      const current = await declaredVersion(h.host.nodeId);
      expect(current).toBeGreaterThan(h.current);
      await until(() => h.linked.has(current), `${h.host.nodeId} to get version ${current}`);
      expect(h.linked.declarations.at(-1)!.resources).toEqual(expect.arrayContaining([expect.objectContaining({ id: "gap", content: "missed" })]));
    }
    // One versions query for every link, one bodies query: not one per node.
    // Ten links behind: one versions query for them all and one bodies query (the old per-node way was
    // two a link), and one lookup of the links' nodes (the link channel's own check after its gap).
    expect(gatewayDb.count() - before).toBeLessThanOrEqual(3);
    expect(logLines.some((l) => l.includes("fleet declarations pushed") && l.includes('"shared":10'))).toBe(true);
    hosts.forEach((h) => h.linked.ws.terminate());
  });

  it("a host reporting a version older than its node's current one is sent the current one", async () => {
    const { host, linked, current } = await linkedHost();
    bus.away();
    try {
      await upsertRole(deps, { actor: "test", input: { name: "behind-node", selector: {}, resources: [file("behind", "reported")] } });
      await bus.drain();
      const newest = await declaredVersion(host.nodeId);
      expect(newest).toBeGreaterThan(current);
      // Its timer report states what it holds: the gateway finds it behind and sends the current one.
      await report(linked.ws, current);
      await until(() => linked.has(newest), `version ${newest}`);
      expect(linked.declarations.at(-1)).toMatchObject({ version: newest, resources: expect.arrayContaining([expect.objectContaining({ id: "behind" })]) });
    } finally {
      bus.backSilently();
      linked.ws.terminate();
    }
  });

  it("a push that failed on a database error is retried until the host has its declaration", async () => {
    const [host] = await enrolRawHosts(deps, 1);
    await upsertRole(deps, { actor: "test", input: { name: "retried", selector: {}, resources: [file("retried", "at last")] } });
    const current = await declaredVersion(host!.nodeId);
    // Declaration bodies cannot be read: the link-up push fails.
    await deps.db.execute(sql`alter table declaration_bodies rename to declaration_bodies_away`);
    let linked: Awaited<ReturnType<typeof link>> | undefined;
    try {
      linked = await link(host!, 0);
      await until(() => logLines.some((l) => l.includes("push failed; will retry") && l.includes(host!.nodeId)), "a failed push");
    } finally {
      await deps.db.execute(sql`alter table declaration_bodies_away rename to declaration_bodies`);
    }
    await until(() => linked!.has(current), `version ${current} after the retry`);
    expect(linked!.declarations.at(-1)!.resources).toEqual(expect.arrayContaining([expect.objectContaining({ id: "retried", content: "at last" })]));

    // The same on the fleet path (a comparison after a gap), with another change.
    bus.away();
    await upsertRole(deps, { actor: "test", input: { name: "retried", selector: {}, resources: [file("retried", "again")] } });
    await bus.drain();
    const newest = await declaredVersion(host!.nodeId);
    await deps.db.execute(sql`alter table declaration_bodies rename to declaration_bodies_away`);
    try {
      bus.back();
      await until(() => logLines.some((l) => l.includes("declaration comparison failed; will retry")), "a failed comparison");
    } finally {
      await deps.db.execute(sql`alter table declaration_bodies_away rename to declaration_bodies`);
    }
    await until(() => linked!.has(newest), `version ${newest} after the retry`);
    expect(linked!.declarations.at(-1)!.resources).toEqual(expect.arrayContaining([expect.objectContaining({ id: "retried", content: "again" })]));
    linked!.ws.terminate();
  });

  it("retirement finishes through transient database errors: the node ends retired, its key refused and its grant revoked", async () => {
    const [host] = await enrolRawHosts(deps, 1);
    const hostname = `retiring-${host!.nodeId.slice(0, 8)}`;
    await deps.db
      .update(nodes)
      .set({ labels: { retire: hostname } })
      .where(eq(nodes.id, host!.nodeId));
    await upsertRole(deps, {
      actor: "test",
      input: { name: hostname, selector: { labels: { retire: hostname } }, resources: [], grants: [{ id: "db", provider: "postgres", path: "/etc/app.env" }] },
    });
    expect(await settleGrants(deps)).toBe(0);
    const [grant] = await deps.db.select().from(grants).where(eq(grants.nodeId, host!.nodeId));
    expect(mem.held.has(grant!.principal)).toBe(true);

    const linked = await link(host!, await declaredVersion(host!.nodeId));
    await until(() => gateway.connectedNodes().includes(host!.nodeId), "the link");
    // One failure when the retirement is recorded, then one when its grants are revoked: each statement
    // fails once (a sequence is not rolled back with the transaction that failed).
    const failOnce = [
      `create sequence retire_fault_event`,
      `create sequence retire_fault_grant`,
      `create function retire_fault() returns trigger language plpgsql as $$
       begin
         if nextval(tg_argv[0]) = 1 then raise exception 'injected transient failure (%)', tg_argv[0]; end if;
         return new;
       end $$`,
      `create trigger retire_fault_event before insert on events for each row when (new.action = 'node.retired') execute function retire_fault('retire_fault_event')`,
      `create trigger retire_fault_grant before update on grants for each row when (new.revoked_at is not null and old.revoked_at is null) execute function retire_fault('retire_fault_grant')`,
    ];
    for (const statement of failOnce) await deps.db.execute(sql.raw(statement));
    try {
      await retireNode(deps, { actor: "test", input: { id: host!.nodeId } });
      const final = await declaredVersion(host!.nodeId);
      await until(() => linked.declarations.some((d) => d.version === final && d.final === "remove"), "the final declaration");
      await report(linked.ws, final, []);
      await until(() => linked.closedWith() !== undefined, "the link to close");
    } finally {
      for (const statement of [
        "drop trigger retire_fault_event on events",
        "drop trigger retire_fault_grant on grants",
        "drop function retire_fault()",
        "drop sequence retire_fault_event",
        "drop sequence retire_fault_grant",
      ]) {
        await deps.db.execute(sql.raw(statement));
      }
    }
    // Both faults happened: the retirement failed twice before it was done.
    expect(logLines.filter((l) => l.includes("could not complete the retirement; will retry") && l.includes(host!.nodeId))).toHaveLength(2);
    expect(linked.closedWith()).toBe(CloseCode.retired);
    expect(linked.frames.some((f) => f.type === "retired")).toBe(true);
    const [node] = await deps.db.select({ state: nodes.state }).from(nodes).where(eq(nodes.id, host!.nodeId));
    expect(node!.state).toBe("retired");
    const [revoked] = await deps.db.select().from(grants).where(eq(grants.id, grant!.id));
    expect(revoked!.revokedAt).not.toBeNull();
    expect(mem.held.has(grant!.principal)).toBe(false);
    // The retired key is refused at the handshake.
    await expect(openRawLink(served.base, host!, 0)).rejects.toThrow(/403/);
  });
});
