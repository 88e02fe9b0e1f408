// A host cannot make the control plane write without bound (review findings 1, 7, 8): a real
// gateway, a real database, and a ws client speaking the real protocol. Facts toggling a
// role, a repeated identity claim, error frames and a reconnect loop each stay within a per-node budget.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import WebSocket from "ws";
import { and, eq } from "drizzle-orm";
import { declarations, events } from "@mesh/db";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { AGENT_PATH, AUTH_HEADER, CHALLENGE_PATH, challengeMessage } from "@mesh/protocol";
import type { Deps } from "../deps";
import { upsertRole } from "../services/roles";
import { emptyInventory, testProfile, testReport } from "../testing/host-facts";
import { createGateway, type Gateway } from "./gateway";
import { enrolTestNode } from "../testing/test-nodes";

describe.each(testEngines())("a host flooding the control plane's writes on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    t = await createTestDatabase(engine);
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    deps = { db: t.database.db, log: pino({ level: "info" }, sink) };
    // Every changed facts frame is applied at once (no 5 s pacing), so only the new budgets bound the writes.
    gateway = await createGateway({ deps, bus: t.database.bus, factsIntervalMs: 0, reportIntervalMs: 0 });
    server = http.createServer((req, res) => (req.url === CHALLENGE_PATH ? gateway.handleChallenge(req, res) : res.writeHead(404).end()));
    server.on("upgrade", (req, socket, head) => gateway.handleUpgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await upsertRole(deps, {
      actor: "test",
      input: { name: "big", selector: { profile: { cpus: { gte: 8 } } }, resources: [{ type: "directory", id: "big", path: "/big" }] },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await t?.drop();
  });

  const enrol = (machineId = crypto.randomUUID()) => enrolTestNode(deps, { machineId });
  type Host = Awaited<ReturnType<typeof enrol>>;
  const open = async (host: Host): Promise<WebSocket> => {
    const { nonce } = (await (await fetch(base + CHALLENGE_PATH)).json()) as { nonce: string };
    const signature = sign(null, Buffer.from(challengeMessage(host.nodeId, nonce)), host.privateKey).toString("base64");
    const auth = Buffer.from(JSON.stringify({ type: "auth", nodeId: host.nodeId, nonce, signature, declarationVersion: 0, hostVersion: "0.1.0" })).toString(
      "base64url",
    );
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(base.replace("http", "ws") + AGENT_PATH, { headers: { [AUTH_HEADER]: auth }, perMessageDeflate: false });
      ws.once("open", () => resolve(ws));
      ws.once("unexpected-response", (_req, res) =>
        reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode, retryAfter: res.headers["retry-after"] })),
      );
      ws.once("error", reject);
    });
  };
  /** Frames are handled in order: once a report sent last is acked, every frame before it was handled. */
  const settle = (ws: WebSocket, seq: number) =>
    new Promise<void>((resolve) => {
      ws.on("message", (data) => {
        const frame = JSON.parse(String(data));
        if (frame.type === "ack" && frame.seq === seq) resolve();
      });
      const report = testReport(0);
      ws.send(JSON.stringify({ type: "report", seq, report }));
    });
  const eventsOf = async (nodeId: string, action: string) =>
    (await deps.db
      .select()
      .from(events)
      .where(and(eq(events.nodeId, nodeId), eq(events.action, action)))) as { data: Record<string, unknown> }[];
  const closed = (ws: WebSocket) => new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : ws.once("close", () => resolve())));

  it("facts toggling a role and a repeated identity claim write a bounded number of events and declarations", async () => {
    const host = await enrol();
    const ws = await open(host);
    for (let i = 0; i < 40; i++) {
      const profile = testProfile(host.machineId, { cpus: i % 2 === 0 ? 16 : 2, hostname: "someone-else" });
      ws.send(JSON.stringify({ type: "facts", profile, inventory: emptyInventory() }));
    }
    await settle(ws, 1);
    // Every frame changed the stored profile (cpus): the old gateway wrote 40 node.facts, 40 node.facts-refused,
    // 40 declarations and 80 compile/roles-changed events. Now: a budget of 10 an hour, one refusal per claim,
    // and one recompile per 5 minutes.
    expect((await eventsOf(host.nodeId, "node.facts")).length).toBe(10);
    expect(await eventsOf(host.nodeId, "node.facts-refused")).toHaveLength(1);
    // The first change (cpus 2 -> 16) recompiles at once into the role; the rest wait for the pacer's window.
    expect(await eventsOf(host.nodeId, "node.roles-changed")).toHaveLength(1);
    expect(await eventsOf(host.nodeId, "declaration.compile")).toHaveLength(2);
    const rows = await deps.db.select({ version: declarations.version }).from(declarations).where(eq(declarations.nodeId, host.nodeId));
    expect(rows).toHaveLength(2);
    ws.close();
    await closed(ws);
  });

  it("logs a bounded number of a host's error frames", async () => {
    const host = await enrol();
    const ws = await open(host);
    const before = logLines.length;
    for (let i = 0; i < 50; i++) ws.send(JSON.stringify({ type: "error", code: "E", message: `error ${i}` }));
    await settle(ws, 1);
    const lines = logLines.slice(before).filter((l) => l.includes("host sent an error") && l.includes(host.nodeId));
    expect(lines).toHaveLength(10);
    ws.close();
    await closed(ws);
  });

  it("logs refused link attempts within a budget per address", async () => {
    const before = logLines.length;
    for (let i = 0; i < 30; i++) {
      const status = await new Promise<number | undefined>((resolve) => {
        const ws = new WebSocket(base.replace("http", "ws") + AGENT_PATH, { headers: { [AUTH_HEADER]: "garbage" } });
        ws.once("unexpected-response", (_req, res) => (resolve(res.statusCode), ws.terminate()));
        ws.once("error", () => resolve(undefined));
      });
      expect(status).toBe(401);
    }
    expect(logLines.slice(before).filter((l) => l.includes("link refused"))).toHaveLength(10);
  });

  it("answers a node reconnecting in a loop with 503 and Retry-After, and leaves other nodes alone", async () => {
    const looper = await enrol();
    for (let i = 0; i < 10; i++) {
      const ws = await open(looper);
      ws.close();
      await closed(ws);
    }
    const refused = await open(looper).then(
      () => null,
      (err: { status?: number; retryAfter?: string }) => err,
    );
    expect(refused).toMatchObject({ status: 503 });
    expect(Number(refused!.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused!.retryAfter)).toBeLessThanOrEqual(60);
    // Connects past the limit write nothing: ten audited connects, no more. The tenth link's write
    // runs on the gateway's queue for it, which may finish after the client saw its close.
    let connects = 0;
    for (let i = 0; i < 100 && connects < 10; i++) {
      connects = (await eventsOf(looper.nodeId, "node.connect")).length;
      if (connects < 10) await new Promise((r) => setTimeout(r, 20));
    }
    expect(connects).toBe(10);
    const other = await open(await enrol());
    other.close();
    await closed(other);
  });
});
