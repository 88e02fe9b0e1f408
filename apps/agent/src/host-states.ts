// The enrolled host's state as types, each with its transitions: where it is in its life, what it
// stands as towards the control plane, and whether it is saying that its store was lost. host.ts
// holds one of each and moves them only through these functions.

/** Running until stopped or retired; either ends the loop and the link, and nothing is asked of it after. */
export type Life = { kind: "running" } | { kind: "stopping" } | { kind: "retiring" };

/** What status.json says the host is: damaged (no usable identity, no link), revoked by the control plane, or enrolled. */
export type Standing = { kind: "enrolled" } | { kind: "revoked"; reason: string } | { kind: "damaged"; problem: string };

/**
 * The store was found lost: `saying` from the first report that said so (its sequence) until an ack at
 * or past it; then `acked` until a reconcile that started acked reports a store no longer lost.
 */
export type LostStore = { kind: "none" } | { kind: "saying"; since: number } | { kind: "acked"; since: number };

export const RUNNING: Life = { kind: "running" };
export const NOT_LOST: LostStore = { kind: "none" };

/** A stop or a retirement asked for: a second retirement is ignored, a stop during one does not end it. */
export function lifeOn(life: Life, event: "stop" | "retired"): Life {
  if (event === "retired") return { kind: "retiring" };
  return life.kind === "retiring" ? life : { kind: "stopping" };
}

export function initialStanding(damaged: string | undefined): Standing {
  return damaged ? { kind: "damaged", problem: damaged } : { kind: "enrolled" };
}

/** A link accepted: whatever refused the host before is over. A damaged host has no link, so stays damaged. */
export function standingOnLinkUp(standing: Standing): Standing {
  return standing.kind === "revoked" ? { kind: "enrolled" } : standing;
}

/** Refused (or closed) as revoked: the newest reason is kept. */
export function standingOnRevoked(standing: Standing, reason: string): Standing {
  return standing.kind === "damaged" ? standing : { kind: "revoked", reason };
}

/** The report with `sequence` went out saying (or not) that the store is lost. */
export function lostOnReport(lost: LostStore, storeLost: boolean, sequence: number): LostStore {
  return storeLost && lost.kind === "none" ? { kind: "saying", since: sequence } : lost;
}

/** The control plane acknowledged every report up to `seq`. */
export function lostOnAck(lost: LostStore, seq: number): LostStore {
  return lost.kind !== "none" && seq >= lost.since ? { kind: "acked", since: lost.since } : lost;
}

/** A reconcile that started with the loss acknowledged (`clearing`) reported a store that is not lost: over. */
export function lostOnReconciled(lost: LostStore, clearing: boolean, storeLost: boolean): LostStore {
  return clearing && !storeLost ? NOT_LOST : lost;
}

/** The sequence of the first report that said the store was lost, while it is said or acknowledged. */
export function lostSince(lost: LostStore): number | null {
  return lost.kind === "none" ? null : lost.since;
}
