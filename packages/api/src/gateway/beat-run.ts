// Since when this gateway has watched the others: the database time its unbroken run of beats
// began. Only silence inside that run counts against another gateway (sweepDeadGateways).

/**
 * A run of beats is broken by a beat that failed and by a gap between two good beats wider than
 * `maxGapMs` on the database's clock (this process's loop or the database ran late): in either
 * case this gateway heard nothing for a while and its view of the others' silence starts again.
 * Pure: fed the outcome of each beat, it says since when to judge, and whether this beat ends an
 * outage (the gateway then re-asserts the links it holds).
 */
export class BeatRun {
  private last: Date | null = null;
  private since: Date | null = null;
  private failed = false;

  constructor(private readonly maxGapMs: number) {}

  /** A beat failed: whatever comes next starts a new run. */
  failure(): void {
    this.failed = true;
    this.last = null;
  }

  /** A beat was written at `at` (the database's now()). */
  beat(at: Date): { watchedSince: Date; recovered: boolean } {
    const broken = this.last === null || at.getTime() - this.last.getTime() > this.maxGapMs;
    if (broken || this.since === null) this.since = at;
    this.last = at;
    const recovered = this.failed;
    this.failed = false;
    return { watchedSince: this.since, recovered };
  }
}
