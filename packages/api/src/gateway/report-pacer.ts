// Reports paced per node (decision 0015): a replaced report hands its drift on, by
// resource id and bounded, so the audit still hears of drift corrected in between.
import { LIMITS, type Drift, type ReportFrame } from "@mesh/protocol";
import { Pacer } from "./pacer";

export function createReportPacer(opts: {
  intervalMs: number;
  hash: (frame: ReportFrame) => string;
  release: (nodeId: string, frame: ReportFrame, carriedDrift: Drift[]) => void;
  now?: () => number;
}): Pacer<ReportFrame, Map<string, Drift>> {
  return new Pacer<ReportFrame, Map<string, Drift>>({
    intervalMs: opts.intervalMs,
    hash: opts.hash,
    now: opts.now,
    release: (nodeId, frame, carried) => opts.release(nodeId, frame, [...(carried?.values() ?? [])]),
    carry: (carried, replaced) => {
      const into = carried ?? new Map<string, Drift>();
      for (const d of replaced.report.drift) if (into.size < LIMITS.resources || into.has(d.id)) into.set(d.id, d);
      return into;
    },
  });
}
