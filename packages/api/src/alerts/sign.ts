// A delivery's signature: HMAC-SHA256 over the raw body with the webhook's secret, hex, in
// `x-mesh-signature: sha256=<hex>`. A receiver computes the same over the bytes it got and compares
// in constant time (verifySignature is what a receiver written in Node does).
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-mesh-signature";

export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export function verifySignature(secret: string, body: string | Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const want = Buffer.from(signBody(secret, body));
  const got = Buffer.from(header);
  return got.length === want.length && timingSafeEqual(got, want);
}
