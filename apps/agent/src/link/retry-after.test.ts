// A control plane that refuses a link with Retry-After (a node reconnecting too often, or a
// gateway admitting links at its rate, at the challenge or the upgrade) is heard: the refusal
// carries the wait, and the link loop waits that long before it asks again.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { CHALLENGE_PATH, linkRefusal, refusalResponseText } from "@mesh/protocol";
import { LinkRefused, MAX_RETRY_AFTER_MS, fetchChallenge, retryAfterMs } from "./auth";
import { openSocket } from "./connect";
import { testLink } from "./test-link";

let server: http.Server | null = null;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe("Retry-After", () => {
  it("parses seconds, caps them, and ignores what is not a number", () => {
    expect(retryAfterMs("7")).toBe(7000);
    expect(retryAfterMs(["3"])).toBe(3000);
    expect(retryAfterMs("999999")).toBe(MAX_RETRY_AFTER_MS);
    expect(retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT")).toBeUndefined();
    expect(retryAfterMs("-1")).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it("a 503 upgrade answer with Retry-After comes back as a refusal carrying the wait", async () => {
    server = http.createServer();
    server.on("upgrade", (_req, socket) => socket.end(refusalResponseText(linkRefusal("reconnecting-too-often"), 42)));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const err = await openSocket(`ws://127.0.0.1:${port}/agent`, "x", undefined, () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkRefused);
    expect(err).toMatchObject({ status: 503, retryAfterMs: 42_000, code: "reconnecting-too-often", message: expect.stringMatching(/reconnects too often/) });
  });

  /** A control plane whose challenge answers 503 with Retry-After; every challenge request's time is kept. */
  async function admittingControlPlane(retryAfterSeconds: number) {
    const asked: number[] = [];
    server = http.createServer((req, res) => {
      if (req.url !== CHALLENGE_PATH) return void res.writeHead(404).end();
      asked.push(Date.now());
      const refusal = linkRefusal("busy", "the gateway is admitting links at its rate; try again later");
      res.writeHead(refusal.status, { "content-type": "application/json", "retry-after": String(retryAfterSeconds) }).end(JSON.stringify(refusal.body));
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
  }

  it("a 503 challenge with Retry-After comes back as a refusal carrying the wait", async () => {
    const cp = await admittingControlPlane(7);
    const err = await fetchChallenge(cp.url, undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkRefused);
    expect(err).toMatchObject({ status: 503, retryAfterMs: 7000, code: "busy", message: expect.stringMatching(/admitting links at its rate/) });
  });

  it("the link loop asks for its next challenge when its turn comes, not on its backoff", async () => {
    const cp = await admittingControlPlane(2);
    const link = testLink(cp.url);
    link.start();
    try {
      while (cp.asked.length < 3) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await link.stop();
    }
    // Told 2 s: each next request within [2 s, 3 s) of the refusal (the backoff alone would ask within 0.5 s, then 1 s).
    for (let i = 1; i < 3; i++) {
      const gap = cp.asked[i]! - cp.asked[i - 1]!;
      expect(gap).toBeGreaterThanOrEqual(2000);
      expect(gap).toBeLessThan(3000 + 250);
    }
  }, 15_000);
});
