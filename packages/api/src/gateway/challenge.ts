// Link challenges: stateless nonces (random + expiry, HMAC'd with a secret all
// instances share through the database), so any instance can verify any other's;
// a nonce is accepted once across all instances (the used ones are in the database).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { ChallengeFrame } from "@mesh/protocol";
import { memoryUsedNonces, type UsedNonces } from "./used-nonces";

export const CHALLENGE_TTL_MS = 60_000;

export class ChallengeIssuer {
  /** This instance's own accepted nonces: a replay to the same instance costs no query. */
  private readonly local: UsedNonces;

  constructor(
    private readonly secret: Buffer,
    private readonly used: UsedNonces,
    private readonly now: () => number = Date.now,
  ) {
    this.local = memoryUsedNonces(now);
  }

  issue(): ChallengeFrame {
    const expires = this.now() + CHALLENGE_TTL_MS;
    const body = Buffer.alloc(24);
    randomBytes(16).copy(body, 0);
    body.writeBigUInt64BE(BigInt(expires), 16);
    const payload = body.toString("base64url");
    return { type: "challenge", nonce: `${payload}.${this.mac(payload)}`, expiresAt: new Date(expires).toISOString() };
  }

  /** Accepts a nonce once, on any instance, if this control plane issued it and it has not expired. */
  async accept(nonce: string): Promise<boolean> {
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
    if (!(await this.local.claim(nonce, new Date(expires)))) return false;
    return this.used.claim(nonce, new Date(expires));
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.secret).update(payload).digest("base64url");
  }
}
