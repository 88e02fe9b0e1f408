// No request without credentials exhausts the control plane (issue 10, item 1): raw
// TCP clients from other loopback addresses (127.0.0.2/3/4) flood upgrades and hold
// half-sent handshakes, while the test's own calls from 127.0.0.1 keep being served.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { connectFake, enrolFake, nextClose } from "../harness/link";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;
const PER_ADDRESS = 40;

interface RawClient {
  socket: net.Socket;
  /** Everything the server sent. */
  received: () => string;
  closed: Promise<void>;
  isClosed: () => boolean;
}

/** A TCP connection from `from` that sends `text` (maybe not a whole request) and then nothing. */
function rawClient(port: number, from: string, text: string): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress: from });
    let received = "";
    let closed = false;
    socket.on("data", (d) => (received += d));
    socket.on("error", () => {});
    const closedP = new Promise<void>((r) => socket.once("close", () => ((closed = true), r())));
    socket.once("connect", () => {
      if (text) socket.write(text);
      resolve({ socket, received: () => received, closed: closedP, isClosed: () => closed });
    });
    socket.once("error", reject);
  });
}

const upgrade = (path: string, end = "\r\n") =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${end}`;

const statusOf = (received: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);

describe(`connection limits (${engine})`, () => {
  let cp: ControlPlane;
  const stillServed = async () => {
    expect((await fetch(`${cp.url}/api/agent/challenge`)).status).toBe(200);
    expect((await api(cp.url).query("node.list")).total).toBeGreaterThanOrEqual(0);
    expect((await fetch(`${cp.url}/login`)).status).toBe(200);
  };

  beforeAll(async () => {
    cp = await ControlPlane.start({
      engine,
      env: {
        MESH_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
        // Long enough for the test's steps, short enough to watch the deadline close what is held.
        MESH_HEADERS_TIMEOUT_MS: "6000",
        MESH_HANDSHAKE_TIMEOUT_MS: "2000",
      },
    });
  });
  afterAll(() => cp?.dispose());

  it("answers thousands of upgrades to paths that are not the agent's with a status, and closes them", async () => {
    const statuses = new Map<number, number>();
    const total = 3000;
    for (let sent = 0; sent < total; ) {
      const batch = Math.min(PER_ADDRESS - 5, total - sent);
      const clients = await Promise.all(
        Array.from({ length: batch }, (_, i) => rawClient(cp.port, "127.0.0.2", upgrade(i % 2 ? "/_next/hmr" : `/ws-${sent + i}`))),
      );
      await Promise.all(clients.map((c) => c.closed));
      for (const c of clients) statuses.set(statusOf(c.received()), (statuses.get(statusOf(c.received())) ?? 0) + 1);
      sent += batch;
    }
    // Every one got an HTTP answer (in production nothing but /agent is a websocket) and the server closed it.
    expect([...statuses.entries()]).toEqual([[404, total]]);
    await stillServed();
    // A real host still links up.
    const host = await enrolFake(cp.url, (await api(cp.url).mutate("token.create", {})).token);
    const ws = await connectFake(cp.url, host);
    const closed = nextClose(ws);
    ws.close();
    await closed;
  });

  it("holds at most the per-address cap of half-sent /agent handshakes, refuses the rest at once, and closes the held ones at the deadline", async () => {
    const held = await Promise.all(Array.from({ length: PER_ADDRESS }, () => rawClient(cp.port, "127.0.0.3", upgrade("/agent", ""))));
    const over = await Promise.all(Array.from({ length: 30 }, () => rawClient(cp.port, "127.0.0.3", upgrade("/agent", ""))));
    // Over the cap: answered 503 and closed, without waiting for anything.
    await Promise.all(over.map((c) => c.closed));
    expect(over.map((c) => statusOf(c.received()))).toEqual(Array(30).fill(503));
    expect(held.filter((c) => c.isClosed())).toEqual([]);
    // The cap is per address: this test's address is served meanwhile.
    await stillServed();
    // ...and nothing another address holds opens the way for one more from this one.
    const oneMore = await rawClient(cp.port, "127.0.0.3", "");
    await oneMore.closed;
    expect(statusOf(oneMore.received())).toBe(503);
    // The handshakes never finished their headers: the server ends each (408) at its deadline.
    await Promise.all(held.map((c) => c.closed));
    expect(new Set(held.map((c) => statusOf(c.received())))).toEqual(new Set([408]));
    // The cap frees up again (once the server has seen the sockets close too).
    await waitFor("the address to be served again", async () => {
      const after = await rawClient(cp.port, "127.0.0.3", upgrade("/agent"));
      await after.closed;
      return statusOf(after.received()) === 401;
    });
  });

  it("ends a socket that never sends a request at the deadline (Node sets none for it)", async () => {
    const silent = await Promise.all(Array.from({ length: 10 }, () => rawClient(cp.port, "127.0.0.4", "")));
    await Promise.all(silent.map((c) => c.closed));
    expect(silent.map((c) => statusOf(c.received()))).toEqual(Array(10).fill(408));
    await stillServed();
  });
});
