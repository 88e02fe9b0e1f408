// Enrolment token format (kubeadm-like `id.secret`), generation and checking.
// Only sha256(secret) is stored: the secret has 124 bits, so a slow hash adds nothing.
import { createHash, randomInt, timingSafeEqual } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
export const TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{24})$/;

function randomString(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export function generateToken(): { id: string; secret: string; token: string } {
  const id = randomString(6);
  const secret = randomString(24);
  return { id, secret, token: `${id}.${secret}` };
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function parseToken(token: string): { id: string; secret: string } | null {
  const m = TOKEN_PATTERN.exec(token);
  return m ? { id: m[1]!, secret: m[2]! } : null;
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}
