// A handshake admitted at its challenge keeps its turn through its upgrade: the nonce it was
// issued is its pass. The upgrade that presents it is not charged again (nor refused by the
// admission); the handshake stays in flight until the upgrade settles, or until the pass
// expires unused (a host that fetched a challenge and never came back frees its slot).
import type { HandshakeDone } from "./admission";

/** A host signs and upgrades within milliseconds of its challenge; past this its slot is freed. */
export const PASS_TTL_MS = 10_000;

export class HandshakePasses {
  /** By nonce, in order of issue (one TTL for all, so the oldest are first). At most the in-flight bound. */
  private readonly held = new Map<string, { done: HandshakeDone; expires: number }>();

  constructor(
    private readonly ttlMs: number = PASS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The handshake admitted with this nonce is in flight until its upgrade settles or the pass expires. */
  hold(nonce: string, done: HandshakeDone): void {
    this.sweep();
    this.held.set(nonce, { done, expires: this.now() + this.ttlMs });
  }

  /** The pass of this nonce, once: its `done` ends the handshake. Undefined when none is held (another instance's nonce, expired, used, or none). */
  redeem(nonce: string | undefined): HandshakeDone | undefined {
    this.sweep();
    if (nonce === undefined) return undefined;
    const pass = this.held.get(nonce);
    if (!pass) return undefined;
    this.held.delete(nonce);
    return pass.done;
  }

  /** Frees the slots of passes expired unused. */
  sweep(): void {
    const now = this.now();
    for (const [nonce, pass] of this.held) {
      if (pass.expires > now) break;
      this.held.delete(nonce);
      pass.done(false);
    }
  }

  get size(): number {
    return this.held.size;
  }
}
