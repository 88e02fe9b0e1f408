// A handshake admitted at its challenge keeps its turn through its upgrade: the nonce it was
// issued is its pass. The upgrade that presents it is not charged again (nor refused by the
// admission), and stays in flight until it settles. An unused pass holds its in-flight slot for
// 10 s: under a restart's load the upgrade can take seconds to reach the gateway (the accept queue,
// a starved event loop), and a slot freed before it arrives lets the bound admit more than the
// gateway serves (with a 2 s slot, three of three simulator runs of 2,000 hosts on a starved machine
// had hundreds of challenge and upgrade timeouts in their first link; with 10 s, none). Past that the slot is freed but the pass stays good (uncharged, not counted) until the
// host would have given up. Behind a balancer that is not sticky, an upgrade landing on another
// instance leaves this one's slot held for the 10 s (decision 0043).
import type { HandshakeDone } from "./admission";

/** An unused pass frees its in-flight slot after this. */
export const PASS_SLOT_MS = 10_000;
/** An upgrade presenting its pass is not charged until this after its challenge (the host's own handshake timeout). */
export const PASS_TTL_MS = 15_000;

const NOTHING: HandshakeDone = () => {};

export class HandshakePasses {
  /** Passes still holding their slot, by nonce, oldest first (one interval for all). */
  private readonly holding = new Map<string, { done: HandshakeDone; until: number }>();
  /** Every pass not yet used or expired, by nonce, oldest first: at most the admission's rate × PASS_TTL_MS. */
  private readonly good = new Map<string, number>();

  constructor(private readonly opts: { slotMs?: number; ttlMs?: number; now?: () => number } = {}) {}

  private get now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** The handshake admitted with this nonce is in flight until its upgrade settles (or its slot is freed unused). */
  hold(nonce: string, done: HandshakeDone): void {
    this.sweep();
    const now = this.now;
    this.holding.set(nonce, { done, until: now + (this.opts.slotMs ?? PASS_SLOT_MS) });
    this.good.set(nonce, now + (this.opts.ttlMs ?? PASS_TTL_MS));
  }

  /**
   * The pass of this nonce, once: its `done` ends the handshake (a no-op when its slot was already
   * freed). Undefined when there is none: another instance's nonce, expired, used, or no nonce.
   */
  redeem(nonce: string | undefined): HandshakeDone | undefined {
    this.sweep();
    if (nonce === undefined || !this.good.delete(nonce)) return undefined;
    const held = this.holding.get(nonce);
    if (!held) return NOTHING;
    this.holding.delete(nonce);
    return held.done;
  }

  /** Frees the slots of passes unused past their interval, and forgets expired passes. */
  sweep(): void {
    const now = this.now;
    for (const [nonce, pass] of this.holding) {
      if (pass.until > now) break;
      this.holding.delete(nonce);
      pass.done(false);
    }
    for (const [nonce, expires] of this.good) {
      if (expires > now) break;
      this.good.delete(nonce);
    }
  }

  /** Passes still holding a slot. */
  get holdingSlots(): number {
    return this.holding.size;
  }

  /** Passes still good. */
  get size(): number {
    return this.good.size;
  }
}
