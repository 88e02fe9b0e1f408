// Declarations pushed once per hash and never queued behind a host that does not read: a real
// gateway, a real database and raw ws hosts speaking the real protocol (frames checked with the
// host's own schema, ServerFrame).
import { Writable } from "node:stream";
import { sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import WebSocket from "ws";
import { eq, inArray } from "drizzle-orm";
import { CHANNELS, MANY_NODES, nodes, notify, type ChangeBus } from "@mesh/db";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { AGENT_PATH, AUTH_HEADER, CHALLENGE_PATH, LIMITS, ServerFrame, challengeMessage, type Declaration } from "@mesh/protocol";
import type { Deps } from "../deps";
import { countingDb } from "../testing/counting-db";
import { deleteRole, upsertRole } from "../services/roles";
import { retireNode } from "../services/lifecycle";
import { createGateway, type Gateway } from "./gateway";
import { BEHIND_BYTES } from "./push";
import { grantReference } from "../grants/grant-reference";
import { serveGateway } from "../testing/raw-hosts";
import { enrolTestNode } from "../testing/test-nodes";

describe.each(testEngines())("declaration push on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let gatewayDb: ReturnType<typeof countingDb>;
  let gateway: Gateway;
  let served: Awaited<ReturnType<typeof serveGateway>> | undefined;
  let base: string;
  const logLines: string[] = [];
  /** While set, the gateway hears only "*" on the declaration channel (whatever compile notifies per node). */
  let onlyFleetChanges = false;
  /** While set, the gateway hears nothing on the declaration channel. */
  let deafToDeclarations = false;

  beforeAll(async () => {
    t = await createTestDatabase(engine);
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    deps = { db: t.database.db, log: pino({ level: "info" }, sink) };
    gatewayDb = countingDb(deps.db);
    const real = t.database.bus;
    const bus: ChangeBus = {
      subscribe: (channel, listener) =>
        real.subscribe(channel, (payload) => {
          if (channel === CHANNELS.declaration && onlyFleetChanges && payload !== MANY_NODES) return;
          if (channel === CHANNELS.declaration && deafToDeclarations) return;
          listener(payload);
        }),
    };
    // No heartbeat or flush in the measured windows; a host that does not read is not dropped mid-test.
    gateway = await createGateway({
      deps: { ...deps, db: gatewayDb.db },
      bus,
      pingIntervalMs: 120_000,
      lastCheckedFlushMs: 120_000,
      heartbeatMs: 120_000,
      connectsPerMinute: 1000,
      admissionsPerSecond: 100_000,
    });
    served = await serveGateway(gateway);
    base = served.base;
  });
  afterAll(async () => {
    await gateway?.close();
    await served?.close();
    await t?.drop();
  });

  const enrol = (hostname: string) => enrolTestNode(deps, { profile: { hostname } });
  type Host = Awaited<ReturnType<typeof enrol>>;

  /** A linked host that records every declaration it is sent, parsed as the real host parses it. */
  const link = async (host: Host, at = base) => {
    const { nonce } = (await (await fetch(at + CHALLENGE_PATH)).json()) as { nonce: string };
    const signature = sign(null, Buffer.from(challengeMessage(host.nodeId, nonce)), host.privateKey).toString("base64");
    const auth = Buffer.from(JSON.stringify({ type: "auth", nodeId: host.nodeId, nonce, signature, declarationVersion: 0, hostVersion: "0.1.0" })).toString(
      "base64url",
    );
    const received: Declaration[] = [];
    const waiters: Array<() => void> = [];
    const ws = await new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(at.replace("http", "ws") + AGENT_PATH, {
        headers: { [AUTH_HEADER]: auth },
        perMessageDeflate: false,
        maxPayload: LIMITS.frameBytes,
      });
      ws.on("message", (data, isBinary) => {
        expect(isBinary).toBe(false);
        const frame = ServerFrame.parse(JSON.parse(String(data)));
        if (frame.type !== "declaration") return;
        received.push(frame.declaration);
        waiters.splice(0).forEach((w) => w());
      });
      ws.once("open", () => resolve(ws));
      ws.once("error", reject);
    });
    const until = async (version: number) => {
      while (!received.some((d) => d.version >= version)) await new Promise<void>((r) => waiters.push(r));
    };
    return { ...host, ws, received, until };
  };

  const declaredVersion = async (nodeId: string) => (await deps.db.select({ v: nodes.declaredVersion }).from(nodes).where(eq(nodes.id, nodeId)))[0]!.v;
  const declaredVersions = async (ids: string[]) => {
    const rows = await deps.db.select({ id: nodes.id, v: nodes.declaredVersion }).from(nodes).where(inArray(nodes.id, ids));
    const byId = new Map(rows.map((r) => [r.id, r.v]));
    return ids.map((id) => byId.get(id)!);
  };
  const file = (id: string, content: string) => ({ type: "file" as const, id, path: `/etc/${id}`, content });

  it("sends a role save's frames from the compile's own rows when the gateway runs in the same process: no notification, no read", async () => {
    const role = "local-push";
    await upsertRole(deps, { actor: "test", input: { name: role, selector: {}, resources: [file("local", "first")] } });
    const hosts = [];
    for (let i = 0; i < 30; i++) hosts.push(await enrol(`local-${i}`));
    const linked = await Promise.all(hosts.map((h) => link(h)));
    const before = await declaredVersions(linked.map((h) => h.nodeId));
    await Promise.all(linked.map((h, i) => h.until(before[i]!)));
    const inTime = (p: Promise<unknown>) =>
      Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error("no frame without the notification")), 5_000))]);

    deafToDeclarations = true;
    try {
      const queriesBefore = gatewayDb.count();
      const framesBefore = linked.map((h) => h.received.length);
      await upsertRole(
        { ...deps, localPush: gateway.localPush },
        { actor: "test", input: { name: role, selector: {}, resources: [file("local", "y".repeat(2048))] } },
      );
      const after = await declaredVersions(linked.map((h) => h.nodeId));
      await inTime(Promise.all(linked.map((h, i) => h.until(after[i]!))));
      // Sent from memory: the gateway read nothing, and heard no notification.
      expect(gatewayDb.count() - queriesBefore).toBe(0);
      linked.forEach((h, i) => {
        expect(h.received.length).toBe(framesBefore[i]! + 1);
        const last = h.received.at(-1)!;
        expect(last.version).toBe(after[i]);
        expect(last.resources).toEqual([expect.objectContaining({ id: "local", content: "y".repeat(2048) })]);
      });
      expect(logLines.some((l) => l.includes("committed declarations pushed") && l.includes('"shared":30') && l.includes('"bodies":1'))).toBe(true);
      // The same rows again (a late or repeated call): every link holds them already, nothing is sent.
      gateway.localPush.committed(linked.map((h, i) => ({ nodeId: h.nodeId, version: after[i]!, hash: "3".repeat(64), resources: [] })));
      // An older version than a link holds is never sent either.
      gateway.localPush.committed(linked.map((h, i) => ({ nodeId: h.nodeId, version: after[i]! - 1, hash: "0".repeat(64), resources: [] })));
      // A final declaration (retiring) or a body holding grant references is never sent from memory: the
      // notification's path reads and sends those per node.
      gateway.localPush.committed(
        linked.map((h, i) => ({ nodeId: h.nodeId, version: after[i]! + 1, hash: "1".repeat(64), resources: [], final: "remove" as const })),
      );
      gateway.localPush.committed(
        linked.map((h, i) => ({
          nodeId: h.nodeId,
          version: after[i]! + 1,
          hash: "2".repeat(64),
          resources: [file("secret", grantReference("g-1", "a credential"))],
        })),
      );
      await new Promise((r) => setTimeout(r, 200));
      linked.forEach((h, i) => expect(h.received.length).toBe(framesBefore[i]! + 1));
    } finally {
      deafToDeclarations = false;
      await deleteRole(deps, { actor: "test", name: role });
      for (const h of linked) h.ws.close();
    }
  });

  it("pushes a change to 200 linked hosts with a bounded number of queries, each host its own version of one shared body", async () => {
    const role = "fleet-wide";
    await upsertRole(deps, { actor: "test", input: { name: role, selector: {}, resources: [file("motd", "first")] } });
    const hosts = [];
    for (let i = 0; i < 200; i++) hosts.push(await enrol(`fleet-${i}`));
    // One host is two versions ahead with the same body: a role that came and went.
    await upsertRole(deps, { actor: "test", input: { name: "only-one", selector: { profile: { hostname: "fleet-0" } }, resources: [file("one", "x")] } });
    await deleteRole(deps, { actor: "test", name: "only-one" });
    // Linked a few at a time: the database server is shared, and each link-up takes a connection.
    const linked = [];
    for (let i = 0; i < hosts.length; i += 20) linked.push(...(await Promise.all(hosts.slice(i, i + 20).map((h) => link(h)))));
    const before = await declaredVersions(linked.map((h) => h.nodeId));
    await Promise.all(linked.map((h, i) => h.until(before[i]!)));
    expect(before[0]).toBe(before[1]! + 2);

    onlyFleetChanges = true;
    try {
      const queriesBefore = gatewayDb.count();
      await upsertRole(deps, { actor: "test", input: { name: role, selector: {}, resources: [file("motd", "x".repeat(2048))] } });
      await notify(deps.db, CHANNELS.declaration, MANY_NODES);
      const after = await declaredVersions(linked.map((h) => h.nodeId));
      await Promise.all(linked.map((h, i) => h.until(after[i]!)));
      // Versions read, then bodies: two statements for 200 nodes (the old gateway read each node's declaration).
      // A compile that itself notifies "*" makes a second pass, which finds nothing behind (one statement).
      expect(gatewayDb.count() - queriesBefore).toBeLessThanOrEqual(4);
      linked.forEach((h, i) => {
        const last = h.received.at(-1)!;
        expect(last.version).toBe(after[i]);
        expect(last.resources).toEqual([expect.objectContaining({ id: "motd", content: "x".repeat(2048) })]);
      });
      expect(after[0]).toBe(after[1]! + 2);
      expect(new Set(linked.map((h) => h.received.at(-1)!.hash)).size).toBe(1);
      expect(logLines.some((l) => l.includes("fleet declarations pushed") && l.includes('"shared":200') && l.includes('"bodies":1'))).toBe(true);
    } finally {
      onlyFleetChanges = false;
      await deleteRole(deps, { actor: "test", name: role });
      linked.forEach((h) => h.ws.terminate());
    }
  }, 120_000);

  it("does not queue declarations for a host that does not read, and sends it the current one when it reads again", async () => {
    const host = await link(await enrol("slow-reader"));
    const big = (round: number) => ({
      name: "big",
      selector: { profile: { hostname: "slow-reader" } },
      // About 3 MiB a declaration: a few of them fill the loopback socket buffers on both sides.
      resources: Array.from({ length: 12 }, (_, i) => file(`big-${i}`, `${round}-${i}-`.padEnd(250 * 1024, "y"))),
    });
    await host.until(await declaredVersion(host.nodeId));
    host.ws.pause();
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      await upsertRole(deps, { actor: "test", input: big(round) });
      // The fleet-wide path meets the same bound.
      await notify(deps.db, CHANNELS.declaration, MANY_NODES);
    }
    const current = await declaredVersion(host.nodeId);
    // Wait until the gateway has left the host behind (the pushes arrive through the bus).
    for (let i = 0; i < 200 && !logLines.some((l) => l.includes("its declaration waits") && l.includes(host.nodeId)); i++)
      await new Promise((r) => setTimeout(r, 50));
    const behind = logLines.filter((l) => l.includes("its declaration waits") && l.includes(host.nodeId)).map((l) => JSON.parse(l) as { buffered: number });
    expect(behind.length).toBeGreaterThan(0);
    // What the gateway holds for the host: never more than the bound plus one declaration.
    for (const b of behind) expect(b.buffered).toBeLessThanOrEqual(BEHIND_BYTES + LIMITS.frameBytes);
    host.ws.resume();
    await host.until(current);
    expect(host.received.at(-1)!.version).toBe(current);
    expect(host.received.at(-1)!.resources[0]).toMatchObject({ id: "big-0", content: expect.stringMatching(new RegExp(`^${rounds - 1}-0-`)) });
    // Intermediate versions were skipped, not queued: fewer frames than changes.
    const sinceRound0 = host.received.filter((d) => d.resources.some((r) => r.id === "big-0"));
    expect(sinceRound0.length).toBeLessThan(rounds);
    host.ws.terminate();
  }, 120_000);

  it("sends a retiring node's final declaration on a fleet-wide change, read for that node alone", async () => {
    const retiring = await link(await enrol("retiring"));
    await retiring.until(await declaredVersion(retiring.nodeId));
    onlyFleetChanges = true;
    try {
      await retireNode(deps, { actor: "test", input: { id: retiring.nodeId } });
      await notify(deps.db, CHANNELS.declaration, MANY_NODES);
      const final = await declaredVersion(retiring.nodeId);
      await retiring.until(final);
      expect(retiring.received.at(-1)).toEqual({ version: final, hash: expect.any(String), resources: [], final: "remove" });
      expect(logLines.some((l) => l.includes("fleet declarations pushed") && l.includes('"perNode":1'))).toBe(true);
    } finally {
      onlyFleetChanges = false;
      retiring.ws.terminate();
    }
  });

  it("still drops a host that stays behind past the ping timeout", async () => {
    // A gateway of its own, with a faster heartbeat: slow enough that the pushes below leave the host
    // behind before its first missed pong (a link is dropped at the second ping it did not answer).
    const fast = await createGateway({
      deps,
      bus: t.database.bus,
      gatewayId: "gw-fast-pings",
      pingIntervalMs: 5_000,
      lastCheckedFlushMs: 120_000,
      heartbeatMs: 120_000,
    });
    const fastServed = await serveGateway(fast);
    try {
      const host = await link(await enrol("stuck"), fastServed.base);
      await host.until(await declaredVersion(host.nodeId));
      host.ws.pause();
      for (let round = 0; round < 4; round++) {
        const resources = Array.from({ length: 12 }, (_, i) => file(`stuck-${i}`, `${round}`.padEnd(250 * 1024, "z")));
        await upsertRole(deps, { actor: "test", input: { name: "stuck", selector: { profile: { hostname: "stuck" } }, resources } });
      }
      for (let i = 0; i < 400 && fast.connectedNodes().includes(host.nodeId); i++) await new Promise((r) => setTimeout(r, 50));
      expect(fast.connectedNodes()).not.toContain(host.nodeId);
      expect(logLines.some((l) => l.includes("its declaration waits") && l.includes(host.nodeId))).toBe(true);
      expect(logLines.some((l) => l.includes("no pong; terminating link") && l.includes(host.nodeId))).toBe(true);
      host.ws.terminate();
    } finally {
      await fast.close();
      await fastServed.close();
    }
  }, 60_000);
});
