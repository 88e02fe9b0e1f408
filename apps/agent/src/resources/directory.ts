// The `directory` resource: exists with a mode. Removal is rmdir only: a
// directory that still holds what the host does not own is left and reported.
import { promises as fs } from "node:fs";
import type { DirectoryResource } from "@mesh/protocol";
import { normaliseMode } from "./observed";
import type { RemoveOutcome, ResourceProvider } from "./provider";

export const directoryProvider: ResourceProvider<DirectoryResource> = {
  type: "directory",

  declared(resource) {
    return { type: "directory", path: resource.path, mode: normaliseMode(resource.mode) };
  },

  async apply(resource, hostPath, observed) {
    if (observed && observed.type !== "directory") {
      throw new Error(`${resource.path} is a ${observed.type}; not replaced by a directory`);
    }
    const mode = parseInt(normaliseMode(resource.mode), 8);
    if (!observed) {
      try {
        await fs.mkdir(hostPath, { mode });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") {
          throw new Error(`parent directory of ${resource.path} does not exist (declare it as a directory resource)`);
        }
        throw err;
      }
    }
    // mkdir's mode passes through the umask; chmod says it exactly.
    await fs.chmod(hostPath, mode);
  },

  async remove(hostPath, path): Promise<RemoveOutcome> {
    try {
      await fs.rmdir(hostPath);
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
};
