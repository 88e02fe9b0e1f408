// The interface every resource type implements: what its declared state looks
// like, and how to bring a path to it or take it away. Paths arrive resolved.
import type { Resource, ResourceType } from "@mesh/protocol";
import type { ObservedState } from "./observed";

/** How a removal ended; `kept` is not a failure of the host but is reported. */
export type RemoveOutcome = { kind: "removed" } | { kind: "absent" } | { kind: "kept"; reason: string };

export interface ResourceProvider<R extends Resource = Resource> {
  readonly type: ResourceType;
  /** The state a resource declares, in the shape `observePath` reports. */
  declared(resource: R): ObservedState;
  /** Make `hostPath` match `resource`; `observed` is what stands there now. Throws on failure. */
  apply(resource: R, hostPath: string, observed: ObservedState | null): Promise<void>;
  /** Remove what the host owns at `hostPath`, never anything it does not own. */
  remove(hostPath: string, path: string): Promise<RemoveOutcome>;
}
