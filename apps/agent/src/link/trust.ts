// How the host trusts its control plane: pinned (the sha256 of the server
// certificate's public key, checked on every TLS connection) or explicitly insecure.
import { createHash, X509Certificate } from "node:crypto";
import tls, { type ConnectionOptions, type PeerCertificate } from "node:tls";
import { z } from "zod";
import { TlsPin, tlsPin } from "@mesh/protocol";
import { systemClock } from "../clock";

export const Trust = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("insecure") }),
  z.strictObject({
    kind: z.literal("pinned"),
    pin: TlsPin,
    /** The certificate seen at enrolment: trusted as its own anchor (self-signed). */
    certPem: z.string().min(100).max(32_768),
  }),
]);
export type Trust = z.infer<typeof Trust>;

/** The pin of a certificate's public key: the host's one place that hashes it (the format is the protocol's). */
export function pinOf(cert: X509Certificate): string {
  const spki = cert.publicKey.export({ type: "spki", format: "der" });
  return tlsPin(createHash("sha256").update(spki).digest("hex"));
}

/** Reads the server's certificate without trusting it, to compare with a pin. */
export function probeCertificate(url: string, timeoutMs = 15_000): Promise<X509Certificate> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: u.hostname,
      port: Number(u.port || 443),
      servername: /^[\d.:]+$/.test(u.hostname) ? undefined : u.hostname,
      rejectUnauthorized: false,
    });
    const timer = systemClock.setTimeout(() => socket.destroy(new Error(`TLS handshake with ${u.host} timed out`)), timeoutMs);
    socket.once("secureConnect", () => {
      systemClock.clearTimeout(timer);
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (!cert) reject(new Error(`${u.host} sent no certificate`));
      else resolve(cert);
    });
    socket.once("error", (err) => {
      systemClock.clearTimeout(timer);
      reject(err);
    });
  });
}

/**
 * TLS options for every connection to the control plane. Pinned: the handshake
 * fails unless the certificate's public key matches the pin, before any byte of
 * the request is sent (checkServerIdentity runs inside verification).
 */
export function tlsOptions(trust: Trust | undefined): ConnectionOptions {
  if (!trust || trust.kind === "insecure") return { rejectUnauthorized: false };
  return {
    // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn the pin off.
    rejectUnauthorized: true,
    ca: [...tls.rootCertificates, trust.certPem],
    checkServerIdentity: (_host: string, cert: PeerCertificate) => {
      let seen = "none";
      try {
        seen = pinOf(new X509Certificate(cert.raw));
      } catch {
        // an unreadable certificate matches no pin
      }
      return seen === trust.pin ? undefined : new Error(`the control plane's certificate does not match the pinned key (${seen}, pinned ${trust.pin})`);
    },
  };
}

/** A TLS failure against a pinned control plane, said as what it means. */
export function describeTrustFailure(err: unknown, trust: Trust | undefined): string | null {
  const code = (err as { code?: unknown })?.code;
  if (trust?.kind !== "pinned" || typeof code !== "string") return null;
  if (!/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT_ALTNAME/.test(code)) return null;
  return `the control plane's certificate does not match the pinned key ${trust.pin} (${code}); not talking to it`;
}
