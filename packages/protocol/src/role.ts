// Roles as operators write them: a selector over labels and profile facts, and
// the resources every matching node gets. An empty selector matches every node.
import { z } from "zod";
import { LIMITS } from "./limits";
import { Labels } from "./labels";
import { Resource, refineResources } from "./resources";

export const RoleName = z
  .string()
  .min(1)
  .max(LIMITS.name)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, "lower-case letters, digits and '-'");

const ProfileFact = z.union([z.string().max(256), z.number(), z.boolean()]);

export const Selector = z.strictObject({
  labels: Labels.optional(),
  /** Profile facts that must be equal, e.g. { "arch": "x86_64" }. */
  profile: z.record(z.string().max(64), ProfileFact).optional(),
});
export type Selector = z.infer<typeof Selector>;

export const RoleResources = z.array(Resource).max(LIMITS.resourcesPerRole).superRefine(refineResources);

export const Role = z.strictObject({
  name: RoleName,
  selector: Selector.default({}),
  resources: RoleResources,
});
export type Role = z.infer<typeof Role>;
export type RoleInput = z.input<typeof Role>;
