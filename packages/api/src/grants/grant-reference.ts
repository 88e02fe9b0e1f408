// What a stored declaration holds in place of a grant's credential: the grant's id
// and the sha256 of the credential, so the declaration's hash still moves when the secret does.
import { createHash } from "node:crypto";

const REFERENCE = /^mesh-grant:([^:\s]{1,128}):sha256:([0-9a-f]{64})$/;

export function credentialDigest(credential: string): string {
  return createHash("sha256").update(credential, "utf8").digest("hex");
}

export function grantReference(grantId: string, credential: string): string {
  return `mesh-grant:${grantId}:sha256:${credentialDigest(credential)}`;
}

export function parseGrantReference(content: unknown): { grantId: string; digest: string } | null {
  const m = typeof content === "string" ? REFERENCE.exec(content) : null;
  return m ? { grantId: m[1]!, digest: m[2]! } : null;
}
