// What a host reports after every reconcile: what it owns as observed now, where
// the machine drifted, and what failed.
import { z } from "zod";
import { LIMITS } from "./limits";
import { ResourceId, Resource } from "./resources";
import { Sha256Hex } from "./declaration";

const ResourceType = z.enum(Resource.options.map((o) => o.shape.type.value) as [string, ...string[]]);

export const OwnedResource = z.strictObject({
  id: ResourceId,
  type: ResourceType,
  digest: Sha256Hex,
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

export const Report = z.strictObject({
  declarationVersion: z.number().int().min(0),
  /** Version of the declaration the host refused as a whole, if any. */
  rejectedVersion: z.number().int().min(0).optional(),
  owned: z.array(OwnedResource).max(LIMITS.resources),
  drift: z.array(Drift).max(LIMITS.resources),
  errors: z.array(ResourceError).max(LIMITS.reportErrors),
  storeLost: z.boolean().default(false),
  reconciledAt: z.iso.datetime(),
});
export type Report = z.infer<typeof Report>;
