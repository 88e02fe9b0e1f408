// Full-jitter exponential backoff (base 500 ms, cap 30 s): a fleet that lost its
// control plane comes back spread out instead of all at once.
export class Backoff {
  private attempt = 0;
  constructor(
    private readonly opts: { baseMs?: number; capMs?: number; random?: () => number } = {},
  ) {}

  private get base(): number {
    return this.opts.baseMs ?? 500;
  }
  private get cap(): number {
    return this.opts.capMs ?? 30_000;
  }

  /** The next delay: uniform in [0, min(cap, base * 2^attempt)). */
  next(): number {
    const ceiling = Math.min(this.cap, this.base * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.floor((this.opts.random ?? Math.random)() * ceiling);
  }

  /** After a link stayed up: start from the base again. */
  reset(): void {
    this.attempt = 0;
  }

  /** A revoked node: every further delay is drawn at the cap. */
  pinToCap(): void {
    this.attempt = Math.ceil(Math.log2(this.cap / this.base)) + 1;
  }
}
