// sha256 over canonical JSON: the content hash of declarations and reports.
import { createHash } from "node:crypto";
import { canonicalJson } from "@mesh/protocol";

export function contentHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}
