// Reports paced per node (decision 0015): a replaced report hands its drift on, by
// resource id and bounded, so the audit still hears of drift corrected in between.
// Each carried entry keeps the origin of the report it came from: a report sent again
// after a lost ack was stored already, and its drift must not be told twice.
import { LIMITS, type Drift, type ReportFrame, type ReportOrigin } from "@mesh/protocol";
import { Pacer } from "./pacer";

export interface CarriedDrift {
  drift: Drift;
  origin?: ReportOrigin;
}

export function createReportPacer(opts: {
  intervalMs: number;
  hash: (frame: ReportFrame) => string;
  release: (nodeId: string, frame: ReportFrame, carried: CarriedDrift[]) => void;
  now?: () => number;
}): Pacer<ReportFrame, Map<string, CarriedDrift>> {
  return new Pacer<ReportFrame, Map<string, CarriedDrift>>({
    intervalMs: opts.intervalMs,
    hash: opts.hash,
    now: opts.now,
    release: (nodeId, frame, carried) => opts.release(nodeId, frame, [...(carried?.values() ?? [])]),
    carry: (carried, replaced) => {
      const into = carried ?? new Map<string, CarriedDrift>();
      for (const d of replaced.report.drift) if (into.size < LIMITS.resources || into.has(d.id)) into.set(d.id, { drift: d, origin: replaced.report.origin });
      return into;
    },
  });
}
