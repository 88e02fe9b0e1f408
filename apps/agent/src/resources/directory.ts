// The `directory` resource: exists with a mode, owner and group; with `purge`, holds
// nothing the host does not manage. Removal is rmdir only: what others put there stays.
import { promises as fs } from "node:fs";
import { dirname, join } from "node:path";
import type { DirectoryResource } from "@mesh/protocol";
import { normaliseMode, type State } from "./observed";
import { observePath, ownerIds, restorePath, snapshotPath } from "./path-state";
import type { ProviderContext, RemoveOutcome, ResourceProvider } from "./provider";

/** Entries of a purging directory that no declared or owned path is, or lies under. */
async function unmanagedEntries(hostPath: string, path: string, ctx: ProviderContext): Promise<string[]> {
  const names = await fs.readdir(hostPath);
  return names.filter((name) => !ctx.managedPaths.has(`${path}/${name}`));
}

export const directoryProvider: ResourceProvider<DirectoryResource> = {
  type: "directory",
  atomic: false,

  declared(resource) {
    return {
      type: "directory",
      path: resource.path,
      mode: normaliseMode(resource.mode),
      ...(resource.owner ? { owner: resource.owner } : {}),
      ...(resource.group ? { group: resource.group } : {}),
      ...(resource.purge ? { unmanaged: 0 } : {}),
    };
  },

  async observe(path, resource, ctx) {
    const hostPath = await ctx.hostPath(path);
    const state = await observePath(hostPath, path, ctx);
    if (!state || state.type !== "directory" || !resource?.purge) return state;
    return { ...state, unmanaged: (await unmanagedEntries(hostPath, path, ctx)).length };
  },

  async apply(resource, observed, ctx) {
    if (observed && observed.type !== "directory") {
      throw new Error(`${resource.path} is a ${observed.type}; not replaced by a directory`);
    }
    const hostPath = await ctx.hostPath(resource.path);
    const mode = parseInt(normaliseMode(resource.mode), 8);
    if (!observed) {
      try {
        await fs.mkdir(hostPath, { mode });
        ctx.syncLater(dirname(hostPath));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") {
          throw new Error(`parent directory of ${resource.path} does not exist (declare it as a directory resource)`);
        }
        throw err;
      }
    }
    const ids = await ownerIds(resource, observed, ctx);
    if (ids.uid !== undefined || ids.gid !== undefined) await fs.chown(hostPath, ids.uid ?? -1, ids.gid ?? -1);
    // mkdir's mode passes through the umask; chmod says it exactly.
    await fs.chmod(hostPath, mode);
    if (resource.purge) {
      for (const name of await unmanagedEntries(hostPath, resource.path, ctx)) {
        await fs.rm(join(hostPath, name), { recursive: true, force: true });
        ctx.syncLater(hostPath);
      }
    }
  },

  async remove(path, ctx): Promise<RemoveOutcome> {
    try {
      const hostPath = await ctx.hostPath(path);
      await fs.rmdir(hostPath);
      ctx.syncLater(dirname(hostPath));
      return { kind: "removed" };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { kind: "absent" };
      if (code === "ENOTEMPTY" || code === "EEXIST") {
        return { kind: "kept", reason: `directory ${path} left in place: not empty after removing what the host owns in it` };
      }
      if (code === "ENOTDIR") return { kind: "kept", reason: `${path} is no longer a directory; left in place` };
      throw err;
    }
  },

  async snapshot(path, observed: State, ctx) {
    return snapshotPath(await ctx.hostPath(path), observed, ctx);
  },

  async restore(path, original, ctx) {
    return restorePath(await ctx.hostPath(path), path, original, ctx);
  },
};
