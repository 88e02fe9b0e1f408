// Reconcile now over real links (issue 13): a real gateway and database, raw ws hosts speaking the
// protocol. The frame reaches a link whose host named reconcile-now on its upgrade and not one that
// did not; one call is one notification on the reconcile channel, whatever the number of nodes; a
// bulk revoke closes every held link of its nodes with one notice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { eq } from "drizzle-orm";
import { CHANNELS, nodes } from "@mesh/db";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { CloseCode, EVERY_HOST_FEATURE, HOST_FEATURE, HOST_FEATURES_HEADER, ServerFrame } from "@mesh/protocol";
import type { Deps } from "../deps";
import { upsertRole } from "../services/roles";
import { reconcileNodes, reconcileRole, resolveDrift } from "../services/reconcile-now";
import { bulkRevoke } from "../services/bulk-actions";
import { enrolRawHosts, openRawLink, serveGateway, type RawHost } from "../testing/raw-hosts";
import { createGateway, type Gateway } from "./gateway";

const until = async (cond: () => boolean | Promise<boolean>, what: string) => {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe.each(testEngines())("reconcile now over links on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let gateway: Gateway;
  let served: Awaited<ReturnType<typeof serveGateway>>;
  const notices: string[] = [];

  beforeAll(async () => {
    t = await createTestDatabase(engine, { maxConnections: 6 });
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
    gateway = await createGateway({
      deps,
      bus: t.database.bus,
      pingIntervalMs: 120_000,
      lastCheckedFlushMs: 120_000,
      heartbeatMs: 120_000,
      connectsPerMinute: 1000,
      admissionsPerSecond: 100_000,
      presenceWindowMs: 5,
    });
    served = await serveGateway(gateway);
    await t.database.bus.subscribe(CHANNELS.reconcile, (payload) => notices.push(payload));
  });
  afterAll(async () => {
    await gateway?.close();
    await served?.close();
    await t?.drop();
  });

  /** A linked raw host (naming the features given), recording every frame as the host's parser reads it. */
  const link = async (host: RawHost, features: string | null) => {
    const [row] = await deps.db.select({ v: nodes.declaredVersion }).from(nodes).where(eq(nodes.id, host.nodeId));
    const ws = await openRawLink(served.base, host, row!.v, features === null ? {} : { [HOST_FEATURES_HEADER]: features });
    const frames: ServerFrame[] = [];
    let closedWith: number | undefined;
    ws.on("message", (data) => frames.push(ServerFrame.parse(JSON.parse(String(data)))));
    ws.on("close", (code) => (closedWith = code));
    // Linked once the connect is written (the node's features stored with it).
    await until(async () => (await deps.db.select({ s: nodes.state }).from(nodes).where(eq(nodes.id, host.nodeId)))[0]!.s === "enrolled", "the connect");
    return { ws, reconciles: () => frames.filter((f) => f.type === "reconcile"), closedWith: () => closedWith };
  };

  it("sends the frame to a link whose host named reconcile-now, never to one that did not, with one notice per call", async () => {
    const hosts = await enrolRawHosts(deps, 4);
    const fresh = await link(hosts[0]!, EVERY_HOST_FEATURE);
    const alsoFresh = await link(hosts[1]!, `something-else, ${HOST_FEATURE.reconcileNow}`);
    const old = await link(hosts[2]!, null);
    const [stored] = await deps.db.select({ f: nodes.hostFeatures }).from(nodes).where(eq(nodes.id, hosts[0]!.nodeId));
    expect(stored!.f).toEqual([HOST_FEATURE.reconcileNow]);
    const before = notices.length;
    const answer = await reconcileNodes(deps, { actor: "user:admin", input: { ids: hosts.map((h) => h.nodeId) } });
    expect(answer).toMatchObject({ asked: 4, sent: 2, tooOld: 1, offline: 1 });
    await until(() => fresh.reconciles().length === 1 && alsoFresh.reconciles().length === 1, "the reconcile frames");
    expect(fresh.reconciles()[0]).toEqual({ type: "reconcile", reason: "node.reconcile by user:admin" });
    // The old host got nothing it cannot parse, and its link stays up.
    await new Promise((r) => setTimeout(r, 200));
    expect(old.reconciles()).toEqual([]);
    expect(old.closedWith()).toBeUndefined();
    expect(notices.slice(before)).toEqual([String(answer.eventId)]);
  });

  it("role.reconcile reaches the linked nodes whose declaration includes the role; correct names the resources", async () => {
    const hosts = await enrolRawHosts(deps, 3);
    for (const h of [hosts[0]!, hosts[2]!])
      await deps.db
        .update(nodes)
        .set({ labels: { app: "rn" } })
        .where(eq(nodes.id, h.nodeId));
    await upsertRole(deps, {
      actor: "test",
      input: { name: "rn-app", selector: { labels: { app: "rn" } }, resources: [{ type: "file", id: "rn", path: "/etc/rn", content: "x", onDrift: "report" }] },
    });
    const member = await link(hosts[0]!, EVERY_HOST_FEATURE);
    const other = await link(hosts[1]!, EVERY_HOST_FEATURE);
    // A member of the role whose host is too old: resolved by role at the gateway, still never sent the frame.
    const oldMember = await link(hosts[2]!, null);
    const before = notices.length;
    expect(await reconcileRole(deps, { actor: "user:admin", input: { name: "rn-app" } })).toMatchObject({ asked: 2, sent: 1, tooOld: 1 });
    await until(() => member.reconciles().length === 1, "the role's frame");
    expect(member.reconciles()[0]).toMatchObject({ type: "reconcile", reason: "role.reconcile rn-app by user:admin" });
    await resolveDrift(deps, { actor: "user:admin", how: "correct", input: { id: hosts[0]!.nodeId, resourceIds: ["rn"] } });
    await until(() => member.reconciles().length === 2, "the correct frame");
    expect(member.reconciles()[1]).toMatchObject({ type: "reconcile", correct: ["rn"] });
    expect(other.reconciles()).toEqual([]);
    expect(oldMember.reconciles()).toEqual([]);
    expect(oldMember.closedWith()).toBeUndefined();
    expect(notices.length - before).toBe(2);
  });

  it("a bulk revoke closes every held link of its nodes with one notice", async () => {
    const hosts = await enrolRawHosts(deps, 3);
    const links = await Promise.all(hosts.map((h) => link(h, null)));
    await bulkRevoke(deps, { actor: "user:admin", input: { ids: hosts.map((h) => h.nodeId) } });
    await until(() => links.every((l) => l.closedWith() === CloseCode.revoked), "the links to close");
  });
});
