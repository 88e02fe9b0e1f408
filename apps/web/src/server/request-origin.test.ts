import { describe, expect, it } from "vitest";
import type { IncomingMessage } from "node:http";
import { requestOrigin, validHost } from "./request-origin";
import { TrustedProxies } from "./trusted-proxies";

const req = (peer: string, headers: Record<string, string>) => ({ socket: { remoteAddress: peer }, headers }) as unknown as IncomingMessage;

describe("validHost", () => {
  it.each(["cp.example", "cp.example:3000", "127.0.0.1:80", "[::1]:3000", "localhost", "CP.Example."])("takes %s", (h) =>
    expect(validHost(h)).toBe(h.toLowerCase()),
  );
  it.each([`evil";touch x;"`, "a b", "$(id)", "cp.example/x", "cp.example:99999", "cp.example:", "[zz]:1", "", "a'b", "`id`", "cp.example@x"])(
    "refuses %j",
    (h) => expect(validHost(h)).toBeNull(),
  );
});

describe("requestOrigin", () => {
  const proxies = new TrustedProxies(["10.0.0.0/8", "fd00::1"]);

  it("ignores forwarding headers from a peer that is not a trusted proxy", () => {
    const view = requestOrigin(
      req("203.0.113.9", { host: "cp.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", "x-forwarded-for": "1.2.3.4" }),
      { tls: false, proxies },
    );
    expect(view).toEqual({ origin: "http://cp.example", clientAddress: "203.0.113.9" });
  });

  it("believes a trusted proxy, validating its host like a Host header, and finds the client in X-Forwarded-For", () => {
    const view = requestOrigin(
      req("::ffff:10.1.2.3", {
        host: "internal:3000",
        "x-forwarded-host": "mesh.example",
        "x-forwarded-proto": "https",
        "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.9.9.9",
      }),
      { tls: false, proxies },
    );
    expect(view).toEqual({ origin: "https://mesh.example", clientAddress: "198.51.100.7" });
    expect(requestOrigin(req("fd00::1", { host: "x", "x-forwarded-host": "a'b" }), { tls: false, proxies }).origin).toBeNull();
  });

  it("says https when serving TLS", () => {
    expect(requestOrigin(req("203.0.113.9", { host: "cp.example:8443" }), { tls: true, proxies }).origin).toBe("https://cp.example:8443");
  });
});
