// Pure: the status of each declared resource as the latest report tells it:
// applied, drifted, failed (with its error), skipped, or pending (not reported yet).
import type { Report, Resource } from "@mesh/protocol";

export type ResourceStatus = "applied" | "drifted" | "failed" | "skipped" | "pending";

export interface ResourceState {
  id: string;
  status: ResourceStatus;
  /** The error, the skip reason or the drift description. */
  detail?: string;
  digest?: string;
}

export function resourceStatuses(resources: Resource[], declaredVersion: number, report: Report | null): ResourceState[] {
  const owned = new Map((report?.owned ?? []).map((o) => [o.id, o]));
  const drift = new Map((report?.drift ?? []).map((d) => [d.id, d]));
  const errors = new Map((report?.errors ?? []).filter((e) => e.id).map((e) => [e.id!, e]));
  const skipped = new Map((report?.skipped ?? []).map((s) => [s.id, s]));
  const current = !!report && report.declarationVersion >= declaredVersion;
  return resources.map((r) => {
    const error = errors.get(r.id);
    if (current && error) return { id: r.id, status: "failed", detail: error.message };
    const skip = skipped.get(r.id);
    if (current && skip) return { id: r.id, status: "skipped", detail: skip.reason };
    const d = drift.get(r.id);
    if (current && d && !d.corrected) return { id: r.id, status: "drifted", detail: d.description, digest: owned.get(r.id)?.digest };
    const o = owned.get(r.id);
    if (current && o) return { id: r.id, status: "applied", digest: o.digest };
    return { id: r.id, status: "pending" };
  });
}
