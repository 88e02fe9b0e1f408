// Reconcile now, asked for over the link (a `reconcile` frame) or on the machine (`mesh-host
// reconcile`): requests that arrive before a run starts are folded into that one run, which
// corrects and accepts what they name, and every asker hears how that run ended.
import type { Declaration, Report } from "@mesh/protocol";
import type { Change } from "./run";

export interface ReconcileRequest {
  /** Who asked, for the log. */
  reason?: string;
  correct?: readonly string[];
  accept?: readonly string[];
}

/** How the run that served a request ended. */
export type RequestResult = { ok: true; report: Report; changes: Change[]; unchanged: number } | { ok: false; error: string };

export interface TakenRequests {
  reasons: string[];
  correct: Set<string>;
  accept: Set<string>;
  settle(result: RequestResult): void;
}

export class ReconcileRequests {
  private reasons: string[] = [];
  private correct = new Set<string>();
  private accept = new Set<string>();
  private waiters: ((result: RequestResult) => void)[] = [];
  private asked = false;

  /** Queues the request for the next run; resolves with that run's result. */
  add(request: ReconcileRequest): Promise<RequestResult> {
    this.asked = true;
    if (request.reason && this.reasons.length < 20) this.reasons.push(request.reason);
    for (const id of request.correct ?? []) this.correct.add(id);
    for (const id of request.accept ?? []) this.accept.add(id);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** What the run starting now serves (null: nothing was asked); the queue is empty after. */
  take(): TakenRequests | null {
    if (!this.asked) return null;
    const waiters = this.waiters;
    const taken = { reasons: this.reasons, correct: this.correct, accept: this.accept, settle: (r: RequestResult) => waiters.forEach((w) => w(r)) };
    this.reasons = [];
    this.correct = new Set();
    this.accept = new Set();
    this.waiters = [];
    this.asked = false;
    return taken;
  }

  /** The host stops: whoever waits hears so. */
  abandon(reason: string): void {
    this.take()?.settle({ ok: false, error: reason });
  }
}

/**
 * Ids a request names that this reconcile cannot act on, as report errors: not in the declaration,
 * or (for accept) not `onDrift: report`, whose drift is corrected rather than accepted.
 */
export function requestProblems(taken: TakenRequests, declaration: Declaration | null): string[] {
  const declared = new Map((declaration?.resources ?? []).map((r) => [r.id, r]));
  const problems: string[] = [];
  for (const [verb, ids] of [
    ["correct", taken.correct],
    ["accept", taken.accept],
  ] as const) {
    const unknown = [...ids].filter((id) => !declared.has(id));
    if (unknown.length) problems.push(`reconcile now: cannot ${verb} ${list(unknown)}: not in declaration v${declaration?.version ?? 0}; ignored`);
  }
  const notReport = [...taken.accept].filter((id) => declared.has(id) && declared.get(id)!.onDrift !== "report");
  if (notReport.length) problems.push(`reconcile now: cannot accept drift on ${list(notReport)}: onDrift is "correct", so its drift is corrected`);
  return problems;
}

function list(ids: string[]): string {
  const shown = ids
    .slice(0, 5)
    .map((id) => JSON.stringify(id))
    .join(", ");
  return ids.length > 5 ? `${shown} and ${ids.length - 5} more` : shown;
}
