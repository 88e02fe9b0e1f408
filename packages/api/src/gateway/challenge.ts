// Link challenges: stateless nonces (random + expiry, HMAC'd with a secret all
// instances share through the database), so any instance can verify any other's;
// each instance remembers the nonces it accepted until they expire (no replay).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { ChallengeFrame } from "@mesh/protocol";

export const CHALLENGE_TTL_MS = 60_000;

export class ChallengeIssuer {
  private readonly used = new Map<string, number>();

  constructor(
    private readonly secret: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  issue(): ChallengeFrame {
    const expires = this.now() + CHALLENGE_TTL_MS;
    const body = Buffer.alloc(24);
    randomBytes(16).copy(body, 0);
    body.writeBigUInt64BE(BigInt(expires), 16);
    const payload = body.toString("base64url");
    return { type: "challenge", nonce: `${payload}.${this.mac(payload)}`, expiresAt: new Date(expires).toISOString() };
  }

  /** Accepts a nonce once, if this control plane issued it and it has not expired. */
  accept(nonce: string): boolean {
    const [payload, mac] = nonce.split(".");
    if (!payload || !mac) return false;
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
    const body = Buffer.from(payload, "base64url");
    if (body.length !== 24) return false;
    const expires = Number(body.readBigUInt64BE(16));
    const now = this.now();
    if (expires <= now) return false;
    this.prune(now);
    if (this.used.has(nonce)) return false;
    this.used.set(nonce, expires);
    return true;
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.secret).update(payload).digest("base64url");
  }

  private prune(now: number) {
    for (const [nonce, expires] of this.used) if (expires <= now) this.used.delete(nonce);
  }
}
