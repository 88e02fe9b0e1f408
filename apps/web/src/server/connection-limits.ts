// What one remote address (and everyone together) may hold on the control plane:
// open sockets, a deadline for a first request, and pending agent handshakes.
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { addressKey, type Logger } from "@mesh/api";
import { linkRefusal, refusalResponseText } from "@mesh/protocol";
import type { TrustedProxies } from "./trusted-proxies";

export interface ConnectionLimitOptions {
  max: number;
  perAddress: number;
  pendingHandshakes: number;
  pendingHandshakesPerAddress: number;
  /** An /agent upgrade must be authenticated within this, from its headers' arrival. */
  handshakeTimeoutMs: number;
  /** A connection must send complete request headers within this (first request included). */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
  /** Sockets the open-file limit leaves room for: past it new ones are answered 503 instead of reset by the kernel. */
  socketBudget?: number;
}

/** Refusals for want of file descriptors are logged at most once per this interval, with their count. */
const FILE_LIMIT_LOG_MS = 10_000;

class Counter {
  private readonly counts = new Map<string, number>();
  total = 0;
  get(key: string) {
    return this.counts.get(key) ?? 0;
  }
  add(key: string) {
    this.counts.set(key, this.get(key) + 1);
    this.total++;
  }
  remove(key: string) {
    const n = this.get(key) - 1;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
    this.total--;
  }
}

function endRaw(socket: Duplex, response: string) {
  socket.end(response);
  // end() waits for the peer; a client that never reads must not keep the socket.
  setTimeout(() => socket.destroy(), 1000).unref();
}

function refuseRaw(socket: Duplex, status: 408 | 503, text: string, message: string) {
  const body = JSON.stringify({ error: status === 503 ? "UNAVAILABLE" : "TIMEOUT", message });
  endRaw(
    socket,
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** What a host refused for too many handshakes in progress is told: they finish within a second or two. */
const HANDSHAKES_BUSY_RETRY_SECONDS = 2;

/** What a host whose handshake outlived its deadline is told: about the database driver's own reconnect. */
const HANDSHAKE_LATE_RETRY_SECONDS = 5;

export interface ConnectionLimits {
  /** Reserves a pending agent handshake for the request's peer; null (and the socket answered with 503) when over a limit. */
  admitHandshake(socket: Duplex, peer: string | undefined): { settle(): void } | null;
}

/**
 * Applies the limits to a server: Node's own timeouts for slow headers and bodies,
 * a deadline for a socket's first request (Node sets none for a socket that sends nothing),
 * a per-address cap on open sockets (trusted proxies are exempt) and a total cap.
 */
export function limitConnections(server: Server, opts: ConnectionLimitOptions & { tls: boolean; proxies: TrustedProxies; log: Logger }): ConnectionLimits {
  const { log } = opts;
  server.headersTimeout = opts.headersTimeoutMs;
  server.requestTimeout = opts.requestTimeoutMs;
  server.maxConnections = opts.max;
  const sockets = new Counter();
  const handshakes = new Counter();
  let refusedLogged = 0;
  const budget = opts.socketBudget ?? Number.MAX_SAFE_INTEGER;
  let fileRefusals = 0;
  let fileRefusalLogged = 0;
  const fileLimitHit = (what: string) => {
    fileRefusals++;
    if (Date.now() - fileRefusalLogged < FILE_LIMIT_LOG_MS) return;
    fileRefusalLogged = Date.now();
    log.warn({ refused: fileRefusals, open: sockets.total, budget }, `open-file limit reached: ${what} (raise LimitNOFILE= / ulimit -n)`);
    fileRefusals = 0;
  };
  // At the open-file limit libuv accepts and closes pending connections itself; when it cannot, it says EMFILE here.
  server.on("error", (err: NodeJS.ErrnoException) => {
    // Anything else (a port in use at listen) is the server entry's: it exits (a throw here was
    // swallowed by Next's uncaughtException handler, and the process stayed up serving nothing).
    if (err.code === "EMFILE" || err.code === "ENFILE") fileLimitHit("a connection could not be accepted");
  });

  server.on("connection", (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    if (sockets.total >= budget) {
      // Answered while a descriptor is still free, rather than reset once none is.
      fileLimitHit("new connections refused with 503");
      socket.on("error", () => {});
      if (opts.tls) socket.destroy();
      else refuseRaw(socket, 503, "Service Unavailable", "the control plane holds all the connections it can; retry later");
      return;
    }
    const exempt = opts.proxies.has(socket.remoteAddress);
    if (!exempt && sockets.get(key) >= opts.perAddress) {
      // At most one log line a second: a flood must not become a log flood.
      if (Date.now() - refusedLogged > 1000) {
        refusedLogged = Date.now();
        log.warn({ address: key, limit: opts.perAddress }, "too many connections from one address; refusing");
      }
      socket.on("error", () => {});
      if (opts.tls) socket.destroy();
      else refuseRaw(socket, 503, "Service Unavailable", "too many connections from your address");
      return;
    }
    sockets.add(key);
    socket.once("close", () => sockets.remove(key));
  });

  // A socket (the TLS socket under TLS) must finish its first request's headers in time.
  const firstRequestDeadline = (socket: Socket) => {
    if (socket.destroyed) return;
    const timer = setTimeout(() => refuseRaw(socket, 408, "Request Timeout", "no complete request headers in time"), opts.headersTimeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    socket.once("close", clear);
    deadlines.set(socket, clear);
  };
  const deadlines = new WeakMap<Duplex, () => void>();
  const started = (socket: Duplex) => {
    deadlines.get(socket)?.();
    deadlines.delete(socket);
  };
  server.on(opts.tls ? "secureConnection" : "connection", firstRequestDeadline);
  server.on("request", (req) => started(req.socket));
  server.on("upgrade", (req) => started(req.socket));

  return {
    admitHandshake(socket, peer) {
      const key = addressKey(peer);
      if (handshakes.total >= opts.pendingHandshakes || handshakes.get(key) >= opts.pendingHandshakesPerAddress) {
        socket.on("error", () => {});
        // A host told when to come back (it adds its own jitter) does not retry on its backoff's short first steps.
        endRaw(socket, refusalResponseText(linkRefusal("busy", "too many agent handshakes in progress; retry later"), HANDSHAKES_BUSY_RETRY_SECONDS));
        return null;
      }
      handshakes.add(key);
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        handshakes.remove(key);
      };
      const deadline = setTimeout(() => {
        settle();
        // Headers are in: what is slow is the check behind them (the database, most often). The host
        // is told so and when to come back, rather than finding its socket reset.
        socket.on("error", () => {});
        endRaw(
          socket,
          refusalResponseText(linkRefusal("unavailable", "the control plane could not check the link in time; retry later"), HANDSHAKE_LATE_RETRY_SECONDS),
        );
      }, opts.handshakeTimeoutMs);
      deadline.unref();
      socket.once("close", settle);
      return { settle };
    },
  };
}
