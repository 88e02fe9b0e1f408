// Which unacknowledged reports a host keeps when a new one joins them (pure). The newest
// report's state supersedes every older state; what an older one told (drift, errors) survives.
import { LIMITS, type Drift, type Report, type ResourceError } from "@mesh/protocol";

export interface OutboxEntry {
  sequence: number;
  report: Report;
}

export interface OutboxBounds {
  /** Reports kept at most (the newest always among them). */
  entries: number;
  /** Bytes of report JSON kept at most. */
  bytes: number;
}

/** The newest report grows with carried drift up to half a host frame. */
const CARRYING_BYTES = LIMITS.hostFrameBytes / 2;

const driftKey = (d: Drift) => `${d.id}\u0000${d.declared}\u0000${d.observed}\u0000${d.corrected}`;
const errorKey = (e: ResourceError) => `${e.id}\u0000${e.message}`;

/** Whether `later` tells everything `earlier` told: then `earlier` is only an older state. */
export function tellsAllOf(later: Report, earlier: Report): boolean {
  const drift = new Set(later.drift.map(driftKey));
  const errors = new Set(later.errors.map(errorKey));
  return earlier.drift.every((d) => drift.has(driftKey(d))) && earlier.errors.every((e) => errors.has(errorKey(e)));
}

export const entryBytes = (entry: OutboxEntry) => JSON.stringify(entry).length;

/**
 * The entries to keep once `added` (the newest) joins `pending` (oldest first): an older report is
 * dropped when the newest tells all it told (a plain state report always is). Past the bounds the
 * oldest go, and their corrected drift is carried by the newest (it was not sent yet, so nothing of
 * it can have been stored); their errors and uncorrected drift were state, which the newest replaces.
 */
export function coalesce(pending: readonly OutboxEntry[], added: OutboxEntry, bounds: OutboxBounds): OutboxEntry[] {
  const kept = pending.filter((e) => !tellsAllOf(added.report, e.report));
  let newest = added;
  let carriedSoFar = 0;
  let bytes = kept.reduce((n, e) => n + entryBytes(e), entryBytes(newest));
  while (kept.length > 0 && (kept.length + 1 > bounds.entries || bytes > bounds.bytes)) {
    const oldest = kept.shift()!;
    bytes -= entryBytes(oldest);
    const ids = new Set(newest.report.drift.map((d) => d.id));
    const carried = oldest.report.drift.filter((d) => d.corrected && !ids.has(d.id)).slice(0, LIMITS.resources - newest.report.drift.length);
    if (carried.length > 0) {
      const before = entryBytes(newest);
      // Older first, as they happened; never past what one frame may carry (the rest is left out).
      const drift = newest.report.drift;
      const merged = { ...newest, report: { ...newest.report, drift: [...drift.slice(0, carriedSoFar), ...carried, ...drift.slice(carriedSoFar)] } };
      if (entryBytes(merged) <= CARRYING_BYTES) {
        newest = merged;
        carriedSoFar += carried.length;
        bytes += entryBytes(newest) - before;
      }
    }
  }
  return [...kept, newest];
}
