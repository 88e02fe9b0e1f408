// What a host reports after every reconcile: what it owns as observed now, where
// the machine drifted, and what failed.
import { z } from "zod";
import { LIMITS } from "./limits";
import { ResourceId, RESOURCE_TYPES } from "./resources";
import { Sha256Hex } from "./sha256";

const ResourceType = z.enum(RESOURCE_TYPES);

export const OwnedResource = z.strictObject({
  id: ResourceId,
  type: ResourceType,
  digest: Sha256Hex,
  /** It stood there before the host took it over; leaving the declaration restores it. */
  adopted: z.boolean().optional(),
});
export type OwnedResource = z.infer<typeof OwnedResource>;

export const Drift = z.strictObject({
  id: ResourceId,
  type: ResourceType,
  declared: Sha256Hex,
  observed: Sha256Hex.nullable(),
  description: z.string().max(LIMITS.message),
  corrected: z.boolean(),
});
export type Drift = z.infer<typeof Drift>;

export const ResourceError = z.strictObject({
  id: ResourceId.nullable(),
  message: z.string().max(LIMITS.message),
});
export type ResourceError = z.infer<typeof ResourceError>;

export const SkippedResource = z.strictObject({
  id: ResourceId,
  reason: z.string().max(LIMITS.message),
});
export type SkippedResource = z.infer<typeof SkippedResource>;

/**
 * Where a report stands in its host's numbering. A host keeps what it reported until the control
 * plane stored it and sends it again after a reconnect; the control plane stores each node's last
 * origin and takes one at or below it as already stored (no second write, no second audit event).
 * Sent only to a control plane that says it reads it (FEATURES_HEADER), so older ones are not refused.
 */
export const ReportOrigin = z.strictObject({
  /** Made when the host's outbox was made; a new outbox (a lost state dir) numbers from 0 again. */
  stream: z.string().regex(/^[0-9a-f]{16,64}$/),
  /** Rises with every report of the stream, kept across restarts. */
  sequence: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type ReportOrigin = z.infer<typeof ReportOrigin>;

/** Whether a report from `origin` was stored already, given the origin of the node's stored report. */
export function storedBefore(origin: ReportOrigin | undefined, stored: ReportOrigin | null | undefined): boolean {
  return origin !== undefined && stored != null && origin.stream === stored.stream && origin.sequence <= stored.sequence;
}

export const Report = z.strictObject({
  declarationVersion: z.number().int().min(0),
  /** Version of the declaration the host refused as a whole, if any. */
  rejectedVersion: z.number().int().min(0).optional(),
  owned: z.array(OwnedResource).max(LIMITS.resources),
  drift: z.array(Drift).max(LIMITS.resources),
  errors: z.array(ResourceError).max(LIMITS.reportErrors),
  /** Resources not attempted because one they depend on failed. */
  skipped: z.array(SkippedResource).max(LIMITS.resources).default([]),
  storeLost: z.boolean().default(false),
  /**
   * The generation of the host's store (bumped on every write of it). The control plane keeps the
   * newest it stored; a report from an older store is a store rolled back, so lost (DESIGN invariant 11).
   */
  storeGeneration: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  reconciledAt: z.iso.datetime(),
  origin: ReportOrigin.optional(),
});
export type Report = z.infer<typeof Report>;
