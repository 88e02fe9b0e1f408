// Named API keys look like `meshk_<id>.<secret>`: the id finds the row, only a
// sha256 of the whole key is stored (a slow hash adds nothing to 190 random bits).
import { randomBytes } from "node:crypto";

const PATTERN = /^meshk_([a-z0-9]{8})\.([A-Za-z0-9_-]{32})$/;

export function generateApiKey(): { id: string; key: string } {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const id = Array.from(randomBytes(8), (b) => alphabet[b % alphabet.length]).join("");
  return { id, key: generateApiKeySecret(id) };
}

/** A fresh key for an id: at creation, and when a key is rotated. */
export function generateApiKeySecret(id: string): string {
  return `meshk_${id}.${randomBytes(24).toString("base64url")}`;
}

/** The id of a well-formed named key, or null (then it may be the env admin key). */
export function apiKeyId(presented: string): string | null {
  return PATTERN.exec(presented)?.[1] ?? null;
}
