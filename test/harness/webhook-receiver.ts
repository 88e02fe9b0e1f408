// A webhook endpoint on a loopback port: keeps every delivery (body, signature and event headers)
// and answers each with `status`.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Delivery {
  body: string;
  signature: string;
  event: string;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/mesh`. */
  url: string;
  got: Delivery[];
  close(): Promise<void>;
}

export async function webhookReceiver(status = 204): Promise<WebhookReceiver> {
  const got: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      got.push({ body: Buffer.concat(chunks).toString(), signature: String(req.headers["x-mesh-signature"]), event: String(req.headers["x-mesh-event"]) });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mesh`, got, close: () => new Promise<void>((r) => server.close(() => r())) };
}
