// Admission at the challenge, against a real gateway and database: a burst of challenge requests
// beyond the budget is answered at once (a few challenges, the rest 503 with a Retry-After spread
// by place in line, none timing out), and a host that got a challenge is not refused again at its
// upgrade though the budget is spent. Past the bound on handshakes in flight, challenges wait
// until a handshake in flight settles.
import { sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { testEngines } from "@mesh/db/testing";
import { AGENT_PATH, AUTH_HEADER, CHALLENGE_PATH, challengeMessage } from "@mesh/protocol";
import { servedGatewayFixture, type RawHost } from "../testing/raw-hosts";

describe.each(testEngines())("admission at the challenge on %s", (engine) => {
  const setup = servedGatewayFixture(engine);

  type ChallengeAnswer = { status: number; retryAfter?: number; nonce?: string };
  /** One challenge request; no answer within 20 s is status -1, which the tests say must not happen. */
  const challenge = async (base: string): Promise<ChallengeAnswer> => {
    try {
      const res = await fetch(base + CHALLENGE_PATH, { signal: AbortSignal.timeout(20_000) });
      const body = (await res.json()) as { nonce?: string; error?: string };
      return { status: res.status, retryAfter: res.headers.has("retry-after") ? Number(res.headers.get("retry-after")) : undefined, nonce: body.nonce };
    } catch {
      return { status: -1 };
    }
  };

  /** The upgrade of `host` with `nonce`: 101, or the refusal's status. */
  const upgrade = (base: string, host: RawHost, nonce: string): Promise<{ status: number; ws?: WebSocket }> => {
    const signature = sign(null, Buffer.from(challengeMessage(host.nodeId, nonce)), host.privateKey).toString("base64");
    const auth = Buffer.from(JSON.stringify({ type: "auth", nodeId: host.nodeId, nonce, signature, declarationVersion: 0, hostVersion: "0.1.0" })).toString(
      "base64url",
    );
    return new Promise((resolve) => {
      const ws = new WebSocket(base.replace("http", "ws") + AGENT_PATH, {
        headers: { [AUTH_HEADER]: auth },
        perMessageDeflate: false,
        handshakeTimeout: 20_000,
      });
      ws.once("open", () => resolve({ status: 101, ws }));
      ws.once("unexpected-response", (_req, res) => (res.resume(), resolve({ status: res.statusCode ?? 0 })));
      ws.once("error", () => resolve({ status: -1 }));
    });
  };

  it("answers a burst of challenges beyond the rate at once, and lets the admitted host's upgrade through", async () => {
    const RATE = 5;
    const { base, hosts } = await setup({ admissionsPerSecond: RATE, admissionsPerAddressPerSecond: RATE, handshakesInFlight: 1000 }, 1);
    // The genuine host is admitted at its challenge (the bucket's one token)...
    const first = await challenge(base);
    expect(first.status).toBe(200);
    // ...then a burst of 40 spends the budget: every one answered at once, nearly all 503 with their turn.
    const answers = await Promise.all(Array.from({ length: 40 }, () => challenge(base)));
    expect(answers.filter((a) => a.status === -1)).toEqual([]);
    for (const a of answers) expect([200, 503]).toContain(a.status);
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(37);
    // A refusal carries no nonce (none was made) and a wait spread by place in line, ~RATE a second.
    for (const a of refused) expect(a.nonce).toBeUndefined();
    const waits = refused.map((a) => a.retryAfter!);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(1);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(Math.floor(37 / RATE));
    const perSecond = new Map<number, number>();
    for (const w of waits) perSecond.set(w, (perSecond.get(w) ?? 0) + 1);
    // (At most RATE a second, plus the ones whose places time drained while the burst was still arriving on a busy machine.)
    for (const n of perSecond.values()) expect(n).toBeLessThanOrEqual(2 * RATE);
    // The budget is spent, but the host that got its challenge is not charged (nor refused) again.
    const linked = await upgrade(base, hosts[0]!, first.nonce!);
    expect(linked.status).toBe(101);
    linked.ws!.close();
  });

  it("past the bound on handshakes in flight, a challenge waits until one settles", async () => {
    const { base, hosts } = await setup(
      { admissionsPerSecond: 1000, admissionsPerAddressPerSecond: 1000, handshakesInFlight: 2, handshakesInFlightPerAddress: 2 },
      2,
    );
    const [a, b] = [await challenge(base), await challenge(base)];
    expect([a.status, b.status]).toEqual([200, 200]);
    const third = await challenge(base);
    expect(third).toMatchObject({ status: 503, retryAfter: expect.any(Number) });
    expect(third.retryAfter!).toBeGreaterThanOrEqual(1);
    // One handshake settles (linked): its slot is free for the next challenge.
    const linked = await upgrade(base, hosts[0]!, a.nonce!);
    expect(linked.status).toBe(101);
    expect((await challenge(base)).status).toBe(200);
    expect((await challenge(base)).status).toBe(503);
    // A pass is used once: the same nonce again is charged as a new handshake (and refused while the bound holds).
    expect((await upgrade(base, hosts[0]!, a.nonce!)).status).toBe(503);
    // The other admitted host still links on its pass, bound or not.
    const second = await upgrade(base, hosts[1]!, b.nonce!);
    expect(second.status).toBe(101);
    linked.ws!.close();
    second.ws!.close();
  });
});
