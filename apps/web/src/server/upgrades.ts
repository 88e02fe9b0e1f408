// Every websocket upgrade gets an answer: /agent goes to the gateway (within the
// pending-handshake limits and deadline); in dev, Next's own /_next/ paths are left to Next; the rest get 404.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Gateway } from "@mesh/api/gateway";
import { AGENT_PATH } from "@mesh/protocol";
import type { ConnectionLimits } from "./connection-limits";

function answer(socket: Duplex, status: 400 | 404, message: string) {
  const body = JSON.stringify({ error: status === 404 ? "NOT_FOUND" : "BAD_INPUT", message });
  socket.on("error", () => {});
  socket.end(
    `HTTP/1.1 ${status} ${status === 404 ? "Not Found" : "Bad Request"}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}

export function upgradeListener(opts: { dev: boolean; gateway: Gateway | null; limits: ConnectionLimits; clientAddress: (req: IncomingMessage) => string }) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = (req.url ?? "/").split("?")[0];
    if (pathname === AGENT_PATH && opts.gateway) {
      const pending = opts.limits.admitHandshake(socket, opts.clientAddress(req));
      if (!pending) return;
      opts.gateway.handleUpgrade(req, socket, head, pending.settle);
      return;
    }
    // Next's dev server adds its own upgrade listener for HMR (/_next/hmr): leave its paths alone.
    if (opts.dev && pathname?.startsWith("/_next/")) return;
    answer(
      socket,
      404,
      pathname === AGENT_PATH
        ? "this instance does not serve the agent gateway (MESH_ROLE=web)"
        : `no websocket at ${(pathname ?? "").slice(0, 100)}; hosts connect to ${AGENT_PATH}`,
    );
  };
}
