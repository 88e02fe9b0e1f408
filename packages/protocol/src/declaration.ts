// A declaration: the resources one node must have. The version is per node and
// monotonic; the hash is over the canonical resources, so equal content means
// an equal hash on both sides.
import { z } from "zod";
import { ResourceList } from "./resources";
import { Sha256Hex } from "./sha256";

export { Sha256Hex };

export const Declaration = z.strictObject({
  version: z.number().int().min(0),
  hash: Sha256Hex.optional(),
  resources: ResourceList,
  /**
   * Set on the last declaration a retiring node gets (with no resources):
   * "remove" takes away everything the host owns, "forget" drops ownership and
   * leaves the machine as it is.
   */
  final: z.enum(["remove", "forget"]).optional(),
});
export type Declaration = z.infer<typeof Declaration>;
