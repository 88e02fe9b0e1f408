// The `directory` resource: exists with a mode, owner and group; with `purge`, holds
// nothing the host does not manage. Removal is rmdir only: what others put there stays.
import { closeSync, constants, promises as fs } from "node:fs";
import { dirname } from "node:path";
import type { DirectoryResource } from "@mesh/protocol";
import { normaliseMode, type State } from "./observed";
import { extendState, inodeOf, type Inode, justMade, observeDeclared, openObserved, ownerIds, restorePath, setOwnerAndMode, snapshotPath } from "./path-state";
import type { ProviderContext, RemoveOutcome, ResourceProvider } from "./provider";
import { inDir } from "./safe-path";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Entries of a purging directory (open as `dirFd`) that no declared or owned path is, or lies under. */
async function unmanagedEntries(dirFd: number, path: string, ctx: ProviderContext): Promise<string[]> {
  const names = await fs.readdir(`/proc/self/fd/${dirFd}`);
  return names.filter((name) => !ctx.managedPaths.has(`${path}/${name}`));
}

/**
 * Remove `name` inside the directory open as `dirFd` and everything under it, each level through
 * its own O_NOFOLLOW descriptor: a directory swapped for a symlink meanwhile loses the link, never what it points to.
 */
async function removeTree(dirFd: number, name: string): Promise<void> {
  const at = inDir(dirFd, name);
  let fh;
  try {
    fh = await fs.open(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    // Not a directory (a file, a symlink, a socket): unlink never follows the name it is given.
    if (code === "ENOTDIR" || code === "ELOOP") return fs.unlink(at).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e)));
    throw err;
  }
  try {
    for (const child of await fs.readdir(`/proc/self/fd/${fh.fd}`)) await removeTree(fh.fd, child);
  } finally {
    await fh.close();
  }
  await fs.rmdir(at);
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
    const state = await observeDeclared(path, ctx);
    if (state?.type !== "directory" || !resource?.purge) return state;
    const fd = openObserved(await ctx.hostPath(path), path, "directory", inodeOf(state));
    try {
      return extendState(state, { unmanaged: (await unmanagedEntries(fd, path, ctx)).length });
    } finally {
      closeSync(fd);
    }
  },

  async apply(resource, observed, ctx) {
    if (observed && observed.type !== "directory") {
      throw new Error(`${resource.path} is a ${observed.type}; not replaced by a directory`);
    }
    const hostPath = await ctx.hostPath(resource.path);
    const mode = parseInt(normaliseMode(resource.mode), 8);
    let made: Inode | undefined;
    if (!observed) {
      try {
        await fs.mkdir(hostPath, { mode });
        ctx.syncLater(dirname(hostPath));
        made = justMade(hostPath, resource.path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") {
          throw new Error(`parent directory of ${resource.path} does not exist (declare it as a directory resource)`);
        }
        throw err;
      }
    }
    const ids = await ownerIds(resource, observed, ctx);
    // Through a descriptor of the directory observed (or just made): a symlink swapped in is never followed.
    // mkdir's mode passes through the umask; fchmod says it exactly.
    setOwnerAndMode(hostPath, resource.path, "directory", inodeOf(observed) ?? made, { ...ids, mode });
    if (resource.purge) {
      const fd = openObserved(hostPath, resource.path, "directory", inodeOf(observed) ?? made);
      try {
        for (const name of await unmanagedEntries(fd, resource.path, ctx)) {
          await removeTree(fd, name);
          ctx.syncLater(hostPath);
        }
      } finally {
        closeSync(fd);
      }
    }
  },

  async remove(path, ctx): Promise<RemoveOutcome> {
    try {
      const hostPath = await ctx.hostPath(path);
      // rmdir never follows the last component: a symlink there says ENOTDIR.
      await fs.rmdir(hostPath);
      ctx.paths.forget(path);
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
