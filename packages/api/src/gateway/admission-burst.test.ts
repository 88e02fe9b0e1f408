// A burst of link handshakes above the admission rate, against a real gateway and database:
// every one is answered at once (admitted, or 503 with a Retry-After), none is left to time
// out, the waits are spread by place in the queue, and a refusal comes before any signature
// check (a garbage credential past the rate gets 503, not 401).
import { sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import WebSocket from "ws";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { AGENT_PATH, AUTH_HEADER, CHALLENGE_PATH, challengeMessage } from "@mesh/protocol";
import type { Deps } from "../deps";
import { createToken } from "../services/tokens";
import { enrolWithToken } from "../testing/test-nodes";
import { createGateway, type Gateway } from "./gateway";
import { serveGateway } from "../testing/raw-hosts";

const RATE = 5;
const BURST = 40;

describe.each(testEngines())("link admission on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let gateway: Gateway;
  let served: Awaited<ReturnType<typeof serveGateway>> | undefined;
  let base: string;

  beforeAll(async () => {
    t = await createTestDatabase(engine);
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
    gateway = await createGateway({ deps, bus: t.database.bus, admissionsPerSecond: RATE });
    served = await serveGateway(gateway);
    base = served.base;
  });
  afterAll(async () => {
    await gateway?.close();
    await served?.close();
    await t?.drop();
  });

  type Answer = { status: number; retryAfter?: number; ws?: WebSocket };
  /** One handshake; a handshake timeout is an answer too, and the test says none may happen. */
  const handshake = (auth: string): Promise<Answer> =>
    new Promise((resolve) => {
      const ws = new WebSocket(base.replace("http", "ws") + AGENT_PATH, {
        headers: { [AUTH_HEADER]: auth },
        perMessageDeflate: false,
        handshakeTimeout: 20_000,
      });
      ws.once("open", () => resolve({ status: 101, ws }));
      ws.once("unexpected-response", (_req, res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] === undefined ? undefined : Number(res.headers["retry-after"]) });
      });
      ws.once("error", (err) => resolve({ status: /timeout/i.test(err.message) ? -1 : 0 }));
    });

  it("answers a burst above the rate at once: a few admitted, the rest 503 with Retry-After spread by place in line", async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: {} });
    const { nodeId, ...keys } = await enrolWithToken(deps, token);
    const { nonce } = (await (await fetch(base + CHALLENGE_PATH)).json()) as { nonce: string };
    const signature = sign(null, Buffer.from(challengeMessage(nodeId, nonce)), keys.privateKey).toString("base64");
    const good = Buffer.from(JSON.stringify({ type: "auth", nodeId, nonce, signature, declarationVersion: 0, hostVersion: "0.1.0" })).toString("base64url");
    // The genuine host first, then a burst of garbage credentials that would each be a 401 if checked.
    const first = await handshake(good);
    expect(first.status).toBe(101);
    first.ws!.close();
    const answers = await Promise.all(Array.from({ length: BURST }, () => handshake("not-a-credential")));
    expect(answers.filter((a) => a.status === -1 || a.status === 0)).toEqual([]);
    const refused = answers.filter((a) => a.status === 503);
    // At 5/s with a burst of 1, nearly all of them wait; the ones admitted were checked, and refused with 401.
    expect(refused.length).toBeGreaterThanOrEqual(BURST - 3);
    for (const a of answers) expect([401, 503]).toContain(a.status);
    const waits = refused.map((a) => a.retryAfter!);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(1);
    // Spread by place in line: ~5 per second of wait, up to ~BURST / RATE seconds.
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(Math.floor((BURST - 3) / RATE));
    const perSecond = new Map<number, number>();
    for (const w of waits) perSecond.set(w, (perSecond.get(w) ?? 0) + 1);
    for (const n of perSecond.values()) expect(n).toBeLessThanOrEqual(RATE);
  });
});
