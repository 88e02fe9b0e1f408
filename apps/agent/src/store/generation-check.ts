// Whether the store this host acts on is the one the control plane last acknowledged: the
// generations the host knows and reports, and what a rolled back store looks like (issue 12).
import type { Report } from "@mesh/protocol";

export class GenerationCheck {
  /**
   * The newest store generation this process knows was written (the last reconcile's) or that the
   * control plane acknowledged: a store read back older than it was rolled back, so it is lost.
   */
  private known = 0;
  /** The control plane said this store is older than the one it stored: the next reconcile takes it as lost. */
  private rolledBack = false;
  /**
   * The store's generation as this process first read it. Until the control plane has accepted a
   * report carrying it, reports carry it instead of the current one: a restored backup caught up by
   * the writes made since the start (before the link was up) would otherwise pass for the real store.
   */
  private base: number | null = null;
  private accepted = false;
  /**
   * Reports numbered up to this one were waiting when the link came up: sent before (on an earlier
   * link, or by an earlier process), they may be stored already, and the control plane acks one
   * found stored by its origin without comparing its generation. Nothing is fresh before a link is up.
   */
  private waitingAtLinkUp = Number.MAX_SAFE_INTEGER;
  /**
   * The first report first sent on this link carrying the base generation: only an ack of it or a
   * later one (acks answer every report before them, and reports go in sequence order) accepts the base.
   */
  private baseSeq: number | null = null;

  /** What the next reconcile is told about the store it loads. */
  input(): { acknowledgedGeneration: number; storeRolledBack: boolean } {
    return { acknowledgedGeneration: this.known, storeRolledBack: this.rolledBack };
  }

  /** A reconcile finished; `told` is what input() said before it. */
  reconciled(told: { storeRolledBack: boolean }, outcome: { report: Report; loadedGeneration: number; lostNow: boolean }): void {
    this.known = Math.max(this.known, outcome.report.storeGeneration ?? 0);
    if (told.storeRolledBack) this.rolledBack = false;
    // A store found lost starts again: its first generation is the one to vouch for.
    if (this.base === null || outcome.lostNow) this.base = outcome.loadedGeneration;
  }

  /**
   * An ack; `storeGeneration` is set when the control plane stored a newer generation than the
   * report's. True when that says this store was rolled back (then a reconcile should follow).
   * `lostSeq`: the first report saying the store was lost, whose predecessors speak of an older store.
   */
  acknowledged(seq: number, storeGeneration: number | undefined, lostSeq: number | null): boolean {
    if (storeGeneration === undefined) {
      if (this.baseSeq !== null && seq >= this.baseSeq && !this.rolledBack) this.accepted = true;
      return false;
    }
    if (lostSeq !== null && seq < lostSeq) return false;
    this.known = Math.max(this.known, storeGeneration);
    const first = !this.rolledBack;
    this.rolledBack = true;
    return first;
  }

  /** A link is up; `waitingUpTo` is the newest report still waiting for an ack (-1: none). */
  linkUp(waitingUpTo: number): void {
    this.waitingAtLinkUp = waitingUpTo;
    this.baseSeq = null;
  }

  /**
   * The report numbered `sequence` as sent: until the control plane accepted the generation this
   * process started from, it carries that one.
   */
  forSending(report: Report, connected: boolean, sequence: number): Report {
    if (this.accepted || this.base === null || report.storeGeneration === undefined) return report;
    if (connected && this.baseSeq === null && sequence > this.waitingAtLinkUp) this.baseSeq = sequence;
    // A lost store starts a new line of generations: the control plane takes its current one.
    if (report.storeLost) return report;
    return { ...report, storeGeneration: Math.min(this.base, report.storeGeneration) };
  }
}
