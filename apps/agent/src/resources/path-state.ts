// What stands at a path (never following a final symlink), and the snapshot and
// restore of it that file, directory and symlink adoption share.
import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { createReadStream, lstatSync, promises as fs, readFileSync, readlinkSync } from "node:fs";
import type { Original } from "../store/original";
import { symlinkAtomically, tempBeside, writeFileAtomically } from "./atomic-write";
import { normaliseMode, sha256Hex, type State } from "./observed";
import type { FileResource, SymlinkResource } from "@mesh/protocol";
import type { ProviderContext, RemoveOutcome, ResourceProvider } from "./provider";

/** Larger files are hashed as a stream, so that observing never holds them whole. */
const READ_WHOLE_BELOW = 1024 * 1024;

/**
 * Observe `hostPath` (already resolved under the root); `path` is the declared
 * path the state is reported under. Owner and group come both as numbers and names.
 */
export async function observePath(hostPath: string, path: string, ctx: Pick<ProviderContext, "accounts">): Promise<State | null> {
  // Synchronous on purpose: a thousand small lstats and reads on the main thread take a
  // fifth of the time the promise API's thread-pool round trips do, and each blocks for microseconds.
  let st;
  try {
    st = lstatSync(hostPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
  const ids = {
    uid: st.uid,
    gid: st.gid,
    owner: await ctx.accounts.userName(st.uid),
    group: await ctx.accounts.groupName(st.gid),
  };
  if (st.isSymbolicLink()) return { type: "symlink", path, target: readlinkSync(hostPath), ...ids };
  if (st.isDirectory()) return { type: "directory", path, mode: normaliseMode(st.mode), ...ids };
  if (st.isFile()) {
    const sha256 = st.size < READ_WHOLE_BELOW ? sha256Hex(readFileSync(hostPath)) : await hashStream(hostPath);
    return { type: "file", path, mode: normaliseMode(st.mode), sha256, ...ids };
  }
  return { type: "other", path };
}

function hashStream(hostPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(hostPath)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

export async function snapshotPath(hostPath: string, observed: State, ctx: ProviderContext): Promise<Original> {
  switch (observed.type) {
    case "file":
      return {
        kind: "file",
        blob: await ctx.originals.put(await fs.readFile(hostPath)),
        mode: String(observed.mode),
        uid: Number(observed.uid),
        gid: Number(observed.gid),
      };
    case "directory":
      return { kind: "directory", mode: String(observed.mode), uid: Number(observed.uid), gid: Number(observed.gid) };
    case "symlink":
      return { kind: "symlink", target: String(observed.target) };
    default:
      throw new Error(`${observed.path} is neither a file, a directory nor a symlink; not taken over`);
  }
}

/** Put back what stood at the path before the host adopted it; a directory now in a file's place is left. */
export async function restorePath(hostPath: string, path: string, original: Original, ctx: ProviderContext): Promise<RemoveOutcome> {
  const now = await fs.lstat(hostPath).catch(() => null);
  switch (original.kind) {
    case "file": {
      if (now?.isDirectory()) return { kind: "kept", reason: `${path} is a directory now; the original file was not put back` };
      const content = await ctx.originals.get(original.blob);
      await writeFileAtomically(hostPath, content, { mode: parseInt(original.mode, 8), uid: original.uid, gid: original.gid }, path, ctx.syncLater);
      return { kind: "restored" };
    }
    case "directory": {
      if (now && !now.isDirectory()) return { kind: "kept", reason: `${path} is no longer a directory; the original was not put back` };
      if (!now) {
        await fs.mkdir(hostPath);
        ctx.syncLater(dirname(hostPath));
      }
      await fs.chown(hostPath, original.uid, original.gid);
      await fs.chmod(hostPath, parseInt(original.mode, 8));
      return { kind: "restored" };
    }
    case "symlink": {
      if (now?.isDirectory()) return { kind: "kept", reason: `${path} is a directory now; the original symlink was not put back` };
      await symlinkAtomically(hostPath, original.target, path, ctx.syncLater);
      return { kind: "restored" };
    }
    case "opaque":
      throw new Error(`${path}: a path cannot be restored from a ${original.kind} snapshot`);
  }
}

/** Unlink what stands at a path unless it is a directory now (then it is not what the host made). */
export async function unlinkPath(hostPath: string, path: string, ctx: Pick<ProviderContext, "syncLater">): Promise<RemoveOutcome> {
  let st;
  try {
    st = await fs.lstat(hostPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { kind: "absent" };
    throw err;
  }
  if (st.isDirectory()) return { kind: "kept", reason: `${path} is a directory now, not what the host owned; left in place` };
  await fs.unlink(hostPath);
  ctx.syncLater(dirname(hostPath));
  return { kind: "removed" };
}

/** The temp file a killed write may have left beside the path. */
export async function removeTemp(hostPath: string): Promise<void> {
  await fs.rm(tempBeside(hostPath), { force: true }).catch(() => undefined);
}

/** Declared owner and group as ids; undeclared ones keep what stands there now. */
export async function ownerIds(
  resource: { owner?: string; group?: string },
  observed: State | null,
  ctx: ProviderContext,
): Promise<{ uid?: number; gid?: number }> {
  const keep = observed && observed.type !== "other" && observed.type !== "symlink";
  return {
    uid: resource.owner ? await ctx.accounts.uid(resource.owner) : keep ? Number(observed.uid) : undefined,
    gid: resource.group ? await ctx.accounts.gid(resource.group) : keep ? Number(observed.gid) : undefined,
  };
}

/**
 * Removal, adoption and crash clean-up for what is written beside its path and
 * renamed over it (files and symlinks): the same for both.
 */
export const replacedPathLifecycle: Pick<ResourceProvider<FileResource | SymlinkResource>, "remove" | "snapshot" | "restore" | "settle"> = {
  async remove(path, ctx) {
    return unlinkPath(await ctx.hostPath(path), path, ctx);
  },
  async snapshot(path, observed, ctx) {
    return snapshotPath(await ctx.hostPath(path), observed, ctx);
  },
  async restore(path, original, ctx) {
    return restorePath(await ctx.hostPath(path), path, original, ctx);
  },
  async settle(path, ctx) {
    await removeTemp(await ctx.hostPath(path));
  },
};
