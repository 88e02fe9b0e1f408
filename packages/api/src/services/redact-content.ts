// What a viewer sees of inline file and unit content: its sha256 and size in place of the text,
// since inline content may be a secret (a key, a password in an env file); admins see it whole.
import { createHash } from "node:crypto";
import type { UserRole } from "@mesh/db";
import { parseGrantReference } from "../grants/grant-reference";

/** `mesh-redacted:sha256:<hex of the bytes written>:<size in bytes>`, in place of `content`. */
export function redactedContent(content: string, encoding: unknown): string {
  const bytes = encoding === "base64" ? Buffer.from(content, "base64") : Buffer.from(content, "utf8");
  return `mesh-redacted:sha256:${createHash("sha256").update(bytes).digest("hex")}:${bytes.length}`;
}

/** Whether a caller of this role sees inline content; only admins do. */
export const seesContent = (role: UserRole | null | undefined) => role === "admin";

/**
 * The resources with every inline `content` replaced by its digest and size (file, service unit,
 * anything with a string `content`). A grant's reference (decision 0011) is kept: it holds no secret.
 */
export function redactResources<T>(resources: T[]): T[] {
  return resources.map((r) => {
    if (!r || typeof r !== "object") return r;
    const { content, encoding } = r as { content?: unknown; encoding?: unknown };
    if (typeof content !== "string" || parseGrantReference(content)) return r;
    const redacted: Record<string, unknown> = { ...r, content: redactedContent(content, encoding) };
    if ("encoding" in redacted) redacted.encoding = "utf8";
    return redacted as T;
  });
}
