// What every HTTP request goes through before Next or the gateway sees it: security
// headers, the validated origin and client address, forwarding headers only from trusted proxies, a body-size backstop.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BODY_LIMITS } from "@mesh/api";
import { requestOrigin } from "./request-origin";
import { FORWARDED_HEADER, INTERNAL_HEADERS, ORIGIN_HEADER, REMOTE_ADDRESS_HEADER } from "./runtime";
import { applySecurityHeaders } from "./security-headers";
import type { TrustedProxies } from "./trusted-proxies";

const FORWARDING_HEADERS = ["x-forwarded-host", "x-forwarded-proto", "x-forwarded-for", "x-forwarded-port", "forwarded"];

function refuse(res: ServerResponse, status: 400 | 413, error: string, message: string) {
  res.writeHead(status, { "content-type": "application/json", connection: "close" }).end(JSON.stringify({ error, message }));
}

/** Prepares the request for the routes; false when it was answered here (and must go no further). */
export function admitRequest(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { dev: boolean; tls: boolean; servedOverHttps: boolean; proxies: TrustedProxies },
): boolean {
  applySecurityHeaders(req, res, { dev: opts.dev, https: opts.servedOverHttps });
  // Routes learn the peer, the origin and whether a proxy was involved from us only.
  const forwarded = req.headers["x-forwarded-for"] !== undefined || req.headers.forwarded !== undefined;
  const view = requestOrigin(req, { tls: opts.tls, proxies: opts.proxies });
  for (const name of INTERNAL_HEADERS) delete req.headers[name];
  if (!opts.proxies.has(req.socket.remoteAddress)) for (const name of FORWARDING_HEADERS) delete req.headers[name];
  // A backstop before any route: none takes more than an upload (each reads through its own, smaller, bound).
  if (Number(req.headers["content-length"] ?? 0) > BODY_LIMITS.upload) {
    refuse(res, 413, "TOO_LARGE", `the body is over ${BODY_LIMITS.upload} bytes`);
    return false;
  }
  if (!view.origin) {
    refuse(res, 400, "BAD_INPUT", "the Host header must be hostname[:port]");
    return false;
  }
  req.headers[REMOTE_ADDRESS_HEADER] = view.clientAddress;
  req.headers[FORWARDED_HEADER] = forwarded ? "1" : "0";
  req.headers[ORIGIN_HEADER] = view.origin;
  return true;
}
