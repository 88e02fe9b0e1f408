// A node's key as the control plane stores it (base64 SPKI DER, Ed25519): the one check that a
// signature is that key's, for the link's challenge, a signed HTTP request and a replacement proof.
import { createPublicKey, verify } from "node:crypto";

/** Whether `signature` (base64) is the node key's over `message`; false for anything malformed. */
export function signedByNodeKey(publicKey: string, message: string, signature: string): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, "base64"), format: "der", type: "spki" });
    return verify(null, Buffer.from(message), key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}
