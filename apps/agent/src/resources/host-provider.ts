// The `host` resource: the host's own release. Observed as the running version; applied
// by self-upgrade (verify, put over the binary, exit after the report for the supervisor).
import type { HostResource } from "@mesh/protocol";
import { HOST_VERSION } from "../version";
import type { ResourceProvider } from "./provider";

export const hostProvider: ResourceProvider<HostResource> = {
  type: "host",
  // The binary is renamed in one step, but the running version changes only at the next start.
  atomic: false,

  declared(resource) {
    return { type: "host", version: resource.version };
  },

  // Never adopted: leaving the declaration must not put an older host back.
  exists() {
    return false;
  },

  describe(resource, observed) {
    return `running ${observed?.version ?? "unknown"}, declared ${resource.version}`;
  },

  async observe() {
    return { type: "host", version: HOST_VERSION };
  },

  async apply(resource, observed, ctx) {
    if (observed?.version === resource.version) return;
    if (!ctx.selfUpgrade) throw new Error("self-upgrade needs the host's state directory and binary path; not available here");
    await ctx.selfUpgrade.upgrade(resource, ctx.fetchSource);
  },

  // Leaving the declaration leaves the running host as it is: there is nothing to take away.
  async remove() {
    return { kind: "absent" };
  },

  async snapshot() {
    return { kind: "opaque", data: { version: HOST_VERSION } };
  },

  async restore() {
    return { kind: "absent" };
  },
};
