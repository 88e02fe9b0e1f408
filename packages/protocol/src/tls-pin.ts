// The TLS pin: `sha256:<hex>` of the control plane's certificate's public key (SubjectPublicKeyInfo,
// DER), as kubeadm's CA hash (decision 0004). The format is defined here once; each side that reads
// a certificate hashes its key in one place (the host's link/trust.ts, the control plane's server/tls.ts).
import { z } from "zod";

const PIN = /^sha256:([0-9a-f]{64})$/;

export const TlsPin = z.string().regex(PIN, "a TLS pin: sha256:<64 lower-case hex digits>");
export type TlsPin = z.infer<typeof TlsPin>;

/** The pin of a public key whose SPKI's sha256 is this (64 hex digits, any case). */
export function tlsPin(spkiSha256Hex: string): string {
  const pin = `sha256:${spkiSha256Hex.toLowerCase()}`;
  if (!PIN.test(pin)) throw new Error(`not a sha256 in hex: ${JSON.stringify(spkiSha256Hex.slice(0, 80))}`);
  return pin;
}

/** curl's --pinnedpubkey form of a pin: `sha256//<base64 of the digest>`. */
export function curlPin(pin: string): string {
  const hex = PIN.exec(pin)?.[1];
  if (!hex) throw new Error(`not a TLS pin (sha256:<64 hex digits>): ${JSON.stringify(pin.slice(0, 80))}`);
  const bytes = hex.match(/../g)!.map((h) => Number.parseInt(h, 16));
  return `sha256//${btoa(String.fromCharCode(...bytes))}`;
}
