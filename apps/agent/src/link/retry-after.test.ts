// A control plane that refuses a link with Retry-After (a node reconnecting too often)
// is heard: the refusal carries the wait, and the link loop waits at least that long.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { LinkRefused, MAX_RETRY_AFTER_MS, retryAfterMs } from "./auth";
import { openSocket } from "./connect";

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
    server.on("upgrade", (_req, socket) => {
      const body = JSON.stringify({ error: "UNAVAILABLE", message: "this node reconnects too often; try again later" });
      socket.end(`HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 42\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const err = await openSocket(`ws://127.0.0.1:${port}/agent`, "x", undefined, () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LinkRefused);
    expect(err).toMatchObject({ status: 503, retryAfterMs: 42_000, message: expect.stringMatching(/reconnects too often/) });
  });
});
