// Checks a re-enrolling host's proof that it holds its node's current key: an
// Ed25519 signature by that key over the new key, the token id and a fresh time.
import { signedByNodeKey } from "../auth/node-key";
import { REPLACEMENT_PROOF_SKEW_MS, replacementProofMessage, type ReplacementProof } from "@mesh/protocol";

/** stale: signed, perhaps, but too far from now (a clock to fix); invalid: not the node's key. */
export type ProofCheck = { ok: true } | { ok: false; kind: "stale" | "invalid"; reason: string };

export function checkReplacementProof(
  proof: ReplacementProof,
  expected: { nodeId: string; oldPublicKey: string; newPublicKey: string; tokenId: string; now: Date },
): ProofCheck {
  if (proof.nodeId !== expected.nodeId) return { ok: false, kind: "invalid", reason: "the proof names another node" };
  const skew = Math.abs(Date.parse(proof.time) - expected.now.getTime());
  if (!(skew <= REPLACEMENT_PROOF_SKEW_MS)) {
    return {
      ok: false,
      kind: "stale",
      reason: `the proof's time ${proof.time} is more than ${REPLACEMENT_PROOF_SKEW_MS / 60_000} minutes from the control plane's clock; check this machine's clock`,
    };
  }
  const message = replacementProofMessage(expected.nodeId, expected.newPublicKey, expected.tokenId, proof.time);
  if (signedByNodeKey(expected.oldPublicKey, message, proof.signature)) return { ok: true };
  return { ok: false, kind: "invalid", reason: "the proof is not signed by the node's current key" };
}
