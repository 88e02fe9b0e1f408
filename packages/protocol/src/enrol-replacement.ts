// Proof that a re-enrolling host still holds the key its node enrolled with: a
// signature by the old key over the new key, the token and the time, checked fresh.
import { z } from "zod";
import { NodeId } from "./frames";

/** How far the proof's time may be from the control plane's clock. */
export const REPLACEMENT_PROOF_SKEW_MS = 5 * 60_000;

export const ReplacementProof = z.strictObject({
  /** The node whose key is being replaced. */
  nodeId: NodeId,
  /** When the host signed, ISO 8601. */
  time: z.iso.datetime(),
  /** Ed25519 signature by the node's current (old) key over replacementProofMessage(...), base64. */
  signature: z.string().min(1).max(256),
});
export type ReplacementProof = z.infer<typeof ReplacementProof>;

/**
 * The bytes the old key signs. The domain string keeps it from ever being a valid
 * link or HTTP signature; the token id ties it to one enrolment; the time makes it stale.
 */
export function replacementProofMessage(nodeId: string, newPublicKey: string, tokenId: string, time: string): string {
  return `mesh-enrol-replace-v1\n${nodeId}\n${newPublicKey}\n${tokenId}\n${time}`;
}

/** The id part of a token (`<id>.<secret>`), which the proof names instead of the secret. */
export function tokenIdOf(token: string): string {
  return token.split(".")[0] ?? "";
}
