// Test support for gateway tests that need many links: a gateway behind a bare HTTP server, and
// hosts enrolled through the real service that link and report over raw ws clients speaking the
// real protocol (challenge, signed auth frame, reports answered by acks).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sign, type KeyObject } from "node:crypto";
import WebSocket from "ws";
import { AGENT_PATH, AUTH_HEADER, CHALLENGE_PATH, challengeMessage, type Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import pino from "pino";
import { afterEach } from "vitest";
import type { ChangeBus } from "@mesh/db";
import { createTestDatabase, type TestDatabase } from "@mesh/db/testing";
import { createGateway, type Gateway, type GatewayOptions } from "../gateway/gateway";
import { createToken } from "../services/tokens";
import { enrolWithToken } from "./test-nodes";

export interface RawHost {
  nodeId: string;
  publicKey: string;
  privateKey: KeyObject;
}

/** Serves the gateway's challenge and upgrade on a loopback port; `base` is its http URL. */
export async function serveGateway(gateway: Gateway): Promise<{ base: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => (req.url === CHALLENGE_PATH ? gateway.handleChallenge(req, res) : res.writeHead(404).end()));
  server.on("upgrade", (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * For a describe block: `setup` makes a test database on `engine`, enrols `hosts` raw hosts, and
 * serves a real gateway over it; each test's gateway, server and database are ended after it.
 */
export function servedGatewayFixture(engine: "postgres" | "pglite") {
  const open: { t: TestDatabase; gateway?: Gateway; served?: { close(): Promise<void> } }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.gateway?.close();
      await o.served?.close();
      await o.t.drop();
    }
  });
  return async (options: Omit<GatewayOptions, "deps" | "bus"> = {}, hosts = 1) => {
    const t = await createTestDatabase(engine);
    const o: (typeof open)[number] = { t };
    open.push(o);
    const deps: Deps = { db: t.database.db, log: pino({ level: "silent" }) };
    const enrolled = await enrolRawHosts(deps, hosts);
    o.gateway = await createGateway({ deps, bus: t.database.bus, ...options });
    const served = await serveGateway(o.gateway);
    o.served = served;
    return { deps, base: served.base, hosts: enrolled };
  };
}

export interface TestGateway {
  gateway: Gateway;
  /** The http URL it serves on. */
  base: string;
  /** Closes the gateway, then its server. */
  close(): Promise<void>;
}

/**
 * A gateway over these deps, served on a loopback port. Many hosts link from one address at once in
 * these tests, so admission (per address and in all) is opened wide unless `options` says otherwise.
 */
export async function startTestGateway(deps: Deps, bus: ChangeBus, options: Partial<GatewayOptions> = {}): Promise<TestGateway> {
  const gateway = await createGateway({ deps, bus, admissionsPerSecond: 100_000, handshakesInFlightPerAddress: 100_000, ...options });
  const served = await serveGateway(gateway);
  return {
    gateway,
    base: served.base,
    async close() {
      await gateway.close();
      await served.close();
    },
  };
}

/** Enrols `count` hosts with one token, each with its own key. */
export async function enrolRawHosts(deps: Deps, count: number): Promise<RawHost[]> {
  const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses: count } });
  const hosts: RawHost[] = [];
  for (let i = 0; i < count; i++) hosts.push(await enrolWithToken(deps, token));
  return hosts;
}

/** Links a host: fetches a challenge, signs it, opens the websocket stating `declarationVersion`. */
export async function openRawLink(base: string, host: RawHost, declarationVersion = 1, headers: Record<string, string> = {}): Promise<WebSocket> {
  const { nonce } = (await (await fetch(base + CHALLENGE_PATH)).json()) as { nonce: string };
  const signature = sign(null, Buffer.from(challengeMessage(host.nodeId, nonce)), host.privateKey).toString("base64");
  const auth = Buffer.from(JSON.stringify({ type: "auth", nodeId: host.nodeId, nonce, signature, declarationVersion, hostVersion: "0.1.0" })).toString(
    "base64url",
  );
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(base.replace("http", "ws") + AGENT_PATH, { headers: { ...headers, [AUTH_HEADER]: auth }, perMessageDeflate: false });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

/** Sends one report with this seq and resolves when its ack comes. */
export function sendReport(ws: WebSocket, seq: number, report: Report): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const frame = JSON.parse(String(data));
      if (frame.type === "ack" && frame.seq === seq) ws.off("message", onMessage), resolve(frame.seq);
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ type: "report", seq, report }));
  });
}
