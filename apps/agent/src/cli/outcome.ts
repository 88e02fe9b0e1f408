// One reconcile's outcome as lines for a person: each change, each drift, each error, then a summary
// line (shared by `apply` and `reconcile`). Every kind of change is counted: a `released` one (the
// host's own package left installed, no longer owned) is neither removed nor restored.
import type { Report } from "@mesh/protocol";

export interface ChangeLine {
  kind: string;
  id: string;
  type: string;
  subject: string;
  detail?: string;
}

export function describeOutcome(report: Report, changes: readonly ChangeLine[], unchanged: number): string[] {
  const out: string[] = [];
  for (const c of changes) out.push(`${c.kind} ${c.type} ${c.id} ${c.subject.replace(/^path:/, "")}${c.detail ? `: ${c.detail}` : ""}`);
  for (const d of report.drift) out.push(`drift ${d.type} ${d.id}: ${d.description}${d.corrected ? " (corrected)" : ""}`);
  for (const e of report.errors) out.push(`error ${e.id ?? "-"}: ${e.message}`);
  const count = (k: string) => changes.filter((c) => c.kind === k).length;
  out.push(
    `declaration v${report.declarationVersion}: ${count("created")} created, ${count("adopted")} adopted, ${count("updated")} updated, ` +
      `${count("removed")} removed, ${count("restored")} restored, ${count("released")} released, ${unchanged} unchanged, ${report.errors.length} errors, ` +
      `${report.skipped.length} skipped; ${report.owned.length} owned` +
      (report.storeLost ? " (store was lost)" : ""),
  );
  return out;
}
