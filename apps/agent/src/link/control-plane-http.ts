// HTTP calls to the control plane over node:http(s), so TLS trust (the pin) is
// checked on every call; global fetch cannot take per-connection TLS options.
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { tlsOptions, type Trust } from "./trust";

export interface HttpAnswer {
  status: number;
  /** The answer's headers (Retry-After on a 503). */
  headers: IncomingMessage["headers"];
  body: Buffer;
  text(): string;
}

/**
 * No answer in time. `connected`: the server's machine accepted the TCP connection (a control plane
 * that is there, busy or with a full accept queue), as opposed to one that never answered the connect.
 */
export class NoAnswerInTime extends Error {
  constructor(
    host: string,
    readonly connected: boolean,
  ) {
    super(`no answer from ${host} in time`);
    this.name = "NoAnswerInTime";
  }
}

export function controlPlaneRequest(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    trust?: Trust;
    timeoutMs?: number;
    signal?: AbortSignal;
    maxBytes?: number;
  },
): Promise<HttpAnswer> {
  const u = new URL(url);
  const secure = u.protocol === "https:";
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      u,
      {
        method: opts.method ?? "GET",
        headers: { ...opts.headers, ...(opts.body !== undefined ? { "content-length": String(Buffer.byteLength(opts.body)) } : {}) },
        timeout: opts.timeoutMs ?? 30_000,
        signal: opts.signal,
        ...(secure ? tlsOptions(opts.trust) : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) req.destroy(new Error(`answer over ${maxBytes} bytes`));
          else chunks.push(c);
        });
        res.once("end", () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: () => body.toString("utf8") });
        });
        res.once("error", reject);
      },
    );
    let connected = false;
    req.once("socket", (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once("connect", () => (connected = true));
    });
    req.once("timeout", () => req.destroy(new NoAnswerInTime(u.host, connected)));
    req.once("error", reject);
    req.end(opts.body);
  });
}

/** A GET whose answer is streamed, not gathered: the caller reads (and bounds) the body itself. */
export function controlPlaneGet(url: string, opts: { headers?: Record<string, string>; trust?: Trust; timeoutMs?: number }): Promise<IncomingMessage> {
  const u = new URL(url);
  const secure = u.protocol === "https:";
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      u,
      { method: "GET", headers: opts.headers, timeout: opts.timeoutMs ?? 30_000, ...(secure ? tlsOptions(opts.trust) : {}) },
      resolve,
    );
    req.once("timeout", () => req.destroy(new Error(`no answer from ${u.host} in time`)));
    req.once("error", reject);
    req.end();
  });
}
