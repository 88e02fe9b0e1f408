// Resolving an intent left by a host that died mid-change, pure: what is observed
// now says whether the change finished (own it), never started (forget it), or stopped half-way.
import { digestOf, project, type State } from "../resources/observed";
import type { OwnedRecord } from "../store/ownership";

/** An `applied` no declaration can have: the next plan sees an update (finish it), never drift. */
export const INTERRUPTED = digestOf({ type: "interrupted" });

export type Resolution = "owned" | "dropped";

/**
 * Clears `record.intent` and says whether the record stays. `atomic`: the
 * provider changes its subject in one step, so a create that left something
 * else there was not the host's doing (that thing is adopted on the next plan instead).
 */
export function resolveIntent(record: OwnedRecord, observed: State | null, atomic: boolean): Resolution {
  const intent = record.intent;
  if (!intent) return "owned";
  delete record.intent;
  const want = intent.want as State | undefined;
  const reached = want !== undefined && observed !== null && digestOf(project(observed, want)) === digestOf(want);
  const untouched = record.adopted !== undefined && observed !== null && digestOf(observed) === record.adopted.digest;
  switch (intent.op) {
    case "create":
      if (!observed) return "dropped";
      if (reached) return ((record.applied = digestOf(want!)), "owned");
      // Half made by the host (a directory without its mode yet), or a v1 intent: finish it.
      if (!want || (!atomic && observed.type === want.type)) return ((record.applied = INTERRUPTED), "owned");
      return "dropped";
    case "adopt":
      if (reached) return ((record.applied = digestOf(want!)), "owned");
      if (untouched) return "dropped";
      // Changed half-way: the original is kept, so owning it and finishing is safe either way.
      return ((record.applied = INTERRUPTED), "owned");
    case "update":
      if (reached) record.applied = digestOf(want!);
      return "owned";
    case "remove":
      return observed ? "owned" : "dropped";
    case "restore":
      return untouched || (!observed && !record.adopted) ? "dropped" : "owned";
  }
}
