import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { TrustedProxies } from "./trusted-proxies";
import { untrustedForwardingWarning } from "./untrusted-forwarding";

const request = (remoteAddress: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

describe("untrusted forwarding warning", () => {
  it("warns once per untrusted peer that sends X-Forwarded-*, never for a trusted proxy or a plain client", () => {
    const lines: { peer: string }[] = [];
    const warn = untrustedForwardingWarning(new TrustedProxies(["10.0.0.9"]), { warn: ((obj: { peer: string }) => lines.push(obj)) as never });
    warn(request("::ffff:10.0.0.1", { "x-forwarded-for": "198.51.100.7" }));
    warn(request("10.0.0.1", { "x-forwarded-proto": "https" }));
    warn(request("10.0.0.2"));
    warn(request("10.0.0.9", { "x-forwarded-for": "198.51.100.7" }));
    warn(request("10.0.0.3", { forwarded: "for=198.51.100.7" }));
    expect(lines.map((l) => l.peer)).toEqual(["10.0.0.1", "10.0.0.3"]);
  });
});
