// One link attempt: open the websocket with the signed auth header. A refusal
// at the upgrade (401, 403, 503) comes back as LinkRefused with the server's code and reason.
import WebSocket from "ws";
import { AUTH_HEADER, EVERY_HOST_FEATURE, HOST_FEATURES_HEADER, LIMITS, refusalCodeOf } from "@mesh/protocol";
import { LinkRefused, httpReason, retryAfterMs } from "./auth";
import { tlsOptions, type Trust } from "./trust";

/**
 * `prepare` runs before the upgrade completes: a frame sent together with the
 * 101 response is emitted before any promise continuation could attach a listener.
 */
export function openSocket(url: string, authHeader: string, trust: Trust | undefined, prepare: (ws: WebSocket) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, {
      ...(url.startsWith("wss:") ? tlsOptions(trust) : {}),
      // The server frames this host reads: the control plane sends newer ones (reconcile now) only to hosts that name them.
      headers: { [AUTH_HEADER]: authHeader, [HOST_FEATURES_HEADER]: EVERY_HOST_FEATURE },
      perMessageDeflate: false,
      maxPayload: LIMITS.frameBytes,
      handshakeTimeout: 15_000,
    });
    prepare(ws);
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      if (err) reject(err);
      else resolve(ws);
    };
    // Keep a listener for good: ws emits late errors after an aborted handshake.
    ws.on("error", (err) => settle(err));
    ws.once("open", () => settle(null));
    ws.once("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= 8192) chunks.push(c);
      });
      const done = () => {
        const status = res.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString("utf8");
        settle(new LinkRefused(status, httpReason(status, text), retryAfterMs(res.headers["retry-after"]), refusalCodeOf(text)));
        ws.terminate();
      };
      res.once("end", done);
      res.once("error", done);
    });
  });
}
