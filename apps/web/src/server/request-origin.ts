// The origin a request came to (scheme://host[:port]), worked out once by the server
// entry: a Host that is hostname[:port] only, X-Forwarded-Host/-Proto only from a trusted proxy.
import net from "node:net";
import type { IncomingMessage } from "node:http";
import type { TrustedProxies } from "./trusted-proxies";

const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** hostname[:port], an IPv4 address[:port] or [IPv6][:port]; anything else is null. */
export function validHost(value: string | undefined): string | null {
  if (!value) return null;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value);
  if (!m) return null;
  const [, name, port] = m as unknown as [string, string, string | undefined];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return null;
  const ok = name.startsWith("[") ? net.isIPv6(name.slice(1, -1)) : net.isIPv4(name) || DNS_NAME.test(name);
  return ok ? value.toLowerCase() : null;
}

export interface RequestOrigin {
  /** scheme://host[:port], or null when the request named no valid host. */
  origin: string | null;
  /** The client's address: the peer, or the client a trusted proxy names. */
  clientAddress: string;
}

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.split(",")[0]?.trim();

export function requestOrigin(req: IncomingMessage, opts: { tls: boolean; proxies: TrustedProxies }): RequestOrigin {
  const peer = req.socket.remoteAddress;
  const viaProxy = opts.proxies.has(peer);
  const forwardedFor = req.headers["x-forwarded-for"];
  const clientAddress = opts.proxies.clientAddress(peer, Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor);
  let scheme = opts.tls ? "https" : "http";
  let host = req.headers.host;
  if (viaProxy) {
    const proto = first(req.headers["x-forwarded-proto"])?.toLowerCase();
    if (proto === "http" || proto === "https") scheme = proto;
    host = first(req.headers["x-forwarded-host"]) ?? host;
  }
  const valid = validHost(host);
  return { origin: valid ? `${scheme}://${valid}` : null, clientAddress };
}
