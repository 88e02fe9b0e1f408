// How a host authenticates an HTTP call with its node key (downloads, renewals):
// it signs method, path, time and the body's sha256; the control plane checks
// the signature against the node's stored public key and refuses stale times.
export const HTTP_SIGNATURE_HEADERS = {
  node: "x-mesh-node",
  time: "x-mesh-time",
  signature: "x-mesh-signature",
} as const;

/** How far a signed request's time may be from the control plane's clock. */
export const HTTP_SIGNATURE_SKEW_MS = 5 * 60_000;

/** The bytes a host signs for one HTTP request (bodySha256: hex sha256 of the body, of "" when none). */
export function httpSignatureMessage(method: string, pathWithQuery: string, time: string, bodySha256: string): string {
  return `mesh-http-v1\n${method.toUpperCase()}\n${pathWithQuery}\n${time}\n${bodySha256}`;
}
