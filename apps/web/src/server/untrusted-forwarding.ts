// Tells the operator, once per peer, that X-Forwarded-* came from a peer not in
// MESH_TRUSTED_PROXIES: behind such a proxy every client shares its address (and its limits).
import type { IncomingMessage } from "node:http";
import type { Logger } from "@mesh/api";
import { plainAddress } from "@mesh/api";
import type { TrustedProxies } from "./trusted-proxies";

const FORWARDING = ["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "forwarded"] as const;
/** Peers already warned about; past this many, no more warnings (a scan must not grow memory or the log). */
const MAX_PEERS = 1024;

export function untrustedForwardingWarning(proxies: TrustedProxies, log: Pick<Logger, "warn">): (req: IncomingMessage) => void {
  const warned = new Set<string>();
  return (req) => {
    const peer = plainAddress(req.socket.remoteAddress);
    if (warned.has(peer) || warned.size >= MAX_PEERS || proxies.has(peer)) return;
    const headers = FORWARDING.filter((h) => req.headers[h] !== undefined);
    if (headers.length === 0) return;
    warned.add(peer);
    log.warn(
      { peer, headers },
      "X-Forwarded-* headers from a peer not in MESH_TRUSTED_PROXIES are ignored: if it is your reverse proxy, every client is seen as its address " +
        "(and shares its login and enrolment limits); add it to MESH_TRUSTED_PROXIES. Warned once per peer.",
    );
  };
}
