// The `symlink` resource: a link at a path with a target stored exactly as given
// (relative targets stay relative). Made beside the path and renamed over it.
import type { SymlinkResource } from "@mesh/protocol";
import { symlinkAtomically } from "./atomic-write";
import { observeDeclared, replacedPathLifecycle } from "./path-state";
import type { ResourceProvider } from "./provider";

export const symlinkProvider: ResourceProvider<SymlinkResource> = {
  type: "symlink",
  atomic: true,

  declared(resource) {
    return { type: "symlink", path: resource.path, target: resource.target };
  },

  async observe(path, _resource, ctx) {
    return observeDeclared(path, ctx);
  },

  async apply(resource, observed, ctx) {
    // A directory may hold what the host does not own: never replaced by a link.
    if (observed && observed.type !== "symlink" && observed.type !== "file") {
      throw new Error(`${resource.path} is a ${observed.type}; not replaced by a symlink`);
    }
    await symlinkAtomically(await ctx.hostPath(resource.path), resource.target, resource.path, ctx.syncLater);
  },

  ...replacedPathLifecycle,
};
