import http from "node:http";
import { PassThrough } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { linkRefusal, refusalCodeOf, refusalResponseText } from "@mesh/protocol";
import { limitConnections } from "./connection-limits";
import { TrustedProxies } from "./trusted-proxies";

const servers: http.Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

function limits(overrides: Partial<Parameters<typeof limitConnections>[1]> = {}) {
  const server = http.createServer();
  servers.push(server);
  return limitConnections(server, {
    max: 100,
    perAddress: 10,
    pendingHandshakes: 3,
    pendingHandshakesPerAddress: 2,
    handshakeTimeoutMs: 60_000,
    headersTimeoutMs: 60_000,
    requestTimeoutMs: 60_000,
    tls: false,
    proxies: new TrustedProxies([]),
    log: pino({ level: "silent" }),
    ...overrides,
  });
}

const written = (socket: PassThrough) => {
  let text = "";
  socket.on("data", (d) => (text += d));
  return () => text;
};

describe("pending agent handshakes", () => {
  it("admits up to the per-address and total caps, answers 503 beyond, and frees a slot when one settles", () => {
    const l = limits();
    const a1 = l.admitHandshake(new PassThrough(), "192.0.2.1");
    const a2 = l.admitHandshake(new PassThrough(), "192.0.2.1");
    const over = new PassThrough();
    const text = written(over);
    expect(a1 && a2).toBeTruthy();
    expect(l.admitHandshake(over, "192.0.2.1")).toBeNull();
    // A link refusal, with its code and when to come back (the host reads both).
    expect(text()).toBe(refusalResponseText(linkRefusal("busy", "too many agent handshakes in progress; retry later"), 2));
    // Another address has its own share, up to the total.
    expect(l.admitHandshake(new PassThrough(), "192.0.2.2")).toBeTruthy();
    expect(l.admitHandshake(new PassThrough(), "192.0.2.3")).toBeNull();
    a1!.settle();
    a1!.settle(); // settling twice frees one slot, not two
    expect(l.admitHandshake(new PassThrough(), "192.0.2.1")).toBeTruthy();
    expect(l.admitHandshake(new PassThrough(), "192.0.2.4")).toBeNull();
  });

  it("closes a handshake not settled by the deadline, and frees its slot", async () => {
    const l = limits({ handshakeTimeoutMs: 100, pendingHandshakes: 1 });
    const socket = new PassThrough();
    const text = written(socket);
    expect(l.admitHandshake(socket, "192.0.2.1")).toBeTruthy();
    await new Promise((r) => socket.once("close", r));
    expect(refusalCodeOf(text().split("\r\n\r\n")[1] ?? "")).toBe("unavailable");
    expect(l.admitHandshake(new PassThrough(), "192.0.2.1")).toBeTruthy();
  });
});
