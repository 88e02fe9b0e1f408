// What stands at a path (never following a final symlink), and the snapshot and
// restore of it that file, directory and symlink adoption share. Reads and changes go through O_NOFOLLOW descriptors.
import { createHash } from "node:crypto";
import { dirname } from "node:path";
import {
  closeSync,
  constants,
  createReadStream,
  fchmodSync,
  fchownSync,
  fstatSync,
  lstatSync,
  openSync,
  promises as fs,
  readdirSync,
  readFileSync,
  readlinkSync,
  type Stats,
} from "node:fs";
import type { Original } from "../store/original";
import { symlinkAtomically, tempBeside, writeFileAtomically } from "./atomic-write";
import { normaliseMode, sha256Hex, type State } from "./observed";
import type { FileResource, SymlinkResource } from "@mesh/protocol";
import type { ProviderContext, RemoveOutcome, ResourceProvider } from "./provider";
import { MissingParentError } from "./safe-path";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** Larger files are hashed as a stream, so that observing never holds them whole. */
const READ_WHOLE_BELOW = 1024 * 1024;

export interface Inode {
  dev: number;
  ino: number;
}

/** Which inode each observed state was taken from: an act checks it still stands there. */
const inodes = new WeakMap<State, Inode>();

/** The inode an observation was taken from (none for an absence, or a state made elsewhere). */
export function inodeOf(observed: State | null): Inode | undefined {
  return observed ? inodes.get(observed) : undefined;
}

/** The declared path observed, or null when a parent on the way does not exist. */
export async function observeDeclared(path: string, ctx: Pick<ProviderContext, "accounts" | "hostPath">): Promise<State | null> {
  let hostPath;
  try {
    hostPath = await ctx.hostPath(path);
  } catch (err) {
    if (err instanceof MissingParentError || (err as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw err;
  }
  return observePath(hostPath, path, ctx);
}

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
  let state: State;
  if (st.isSymbolicLink()) state = { type: "symlink", path, target: readlinkSync(hostPath), ...ids };
  else if (st.isDirectory()) state = { type: "directory", path, mode: normaliseMode(st.mode), ...ids };
  else if (st.isFile()) state = { type: "file", path, mode: normaliseMode(st.mode), sha256: await hashFile(hostPath, path, st), ...ids };
  else return { type: "other", path };
  inodes.set(state, { dev: st.dev, ino: st.ino });
  return state;
}

/** The content's sha256, read through a descriptor that is the inode lstat saw (never a symlink swapped in since). */
async function hashFile(hostPath: string, path: string, seen: Stats): Promise<string> {
  const fd = openSync(hostPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  let streamed = false;
  try {
    sameInode(fstatSync(fd), seen, path);
    if (seen.size < READ_WHOLE_BELOW) return sha256Hex(readFileSync(fd));
    streamed = true;
    return await new Promise<string>((resolve, reject) => {
      const hash = createHash("sha256");
      // The stream closes the descriptor at its end or error.
      createReadStream("", { fd })
        .on("data", (chunk) => hash.update(chunk))
        .on("error", reject)
        .on("end", () => resolve(hash.digest("hex")));
    });
  } finally {
    if (!streamed) closeSync(fd);
  }
}

/** An observed state with more to say (a purging directory's count), still tied to the inode it was taken from. */
export function extendState(state: State, extra: Record<string, number | string | boolean | null>): State {
  const extended: State = { ...state, ...extra };
  const seen = inodes.get(state);
  if (seen) inodes.set(extended, seen);
  return extended;
}

function sameInode(now: Stats, seen: { dev: number; ino: number }, path: string): void {
  if (now.dev !== seen.dev || now.ino !== seen.ino)
    throw new Error(`${path} changed while the host was looking at it (something else was put in its place); not touched, tried again next reconcile`);
}

/**
 * Open what stands at `hostPath` without following it, as the kind observed (and the same
 * inode, when `seen` says which): the descriptor every change of owner and mode goes through.
 */
export function openObserved(hostPath: string, path: string, kind: "file" | "directory", seen: Inode | undefined): number {
  let fd;
  try {
    fd = openSync(hostPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (kind === "directory" ? O_DIRECTORY : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR")
      throw new Error(`${path} is no longer a ${kind} (a symlink put there since it was observed?); not followed, tried again next reconcile`);
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (kind === "directory" ? !st.isDirectory() : !st.isFile()) throw new Error(`${path} is no longer a ${kind}; not touched`);
    if (seen) sameInode(st, seen, path);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * The directory mkdir just made, by inode. Empty, or it is not ours: someone who can write the
 * parent may have put another directory (root's own, with its files) in its place since.
 */
export function justMade(hostPath: string, path: string): Inode {
  const fd = openObserved(hostPath, path, "directory", undefined);
  try {
    if (readdirSync(`/proc/self/fd/${fd}`).length) throw new Error(`${path} was replaced by another directory right after the host made it; not touched`);
    const st = fstatSync(fd);
    return { dev: st.dev, ino: st.ino };
  } finally {
    closeSync(fd);
  }
}

/** fchown and fchmod on the descriptor: the path is not looked up again between check and change. */
export function setOwnerAndMode(
  hostPath: string,
  path: string,
  kind: "file" | "directory",
  seen: Inode | undefined,
  want: { uid?: number; gid?: number; mode?: number },
): void {
  const fd = openObserved(hostPath, path, kind, seen);
  try {
    if (want.uid !== undefined || want.gid !== undefined) fchownSync(fd, want.uid ?? -1, want.gid ?? -1);
    if (want.mode !== undefined) fchmodSync(fd, want.mode);
  } finally {
    closeSync(fd);
  }
}

export async function snapshotPath(hostPath: string, observed: State, ctx: ProviderContext): Promise<Original> {
  switch (observed.type) {
    case "file":
      return {
        kind: "file",
        blob: await ctx.originals.put(readObserved(hostPath, observed)),
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

/** The content of an observed file, from the inode observed, and only while it still hashes as observed. */
function readObserved(hostPath: string, observed: State): Buffer {
  const fd = openObserved(hostPath, observed.path as string, "file", inodeOf(observed));
  try {
    const content = readFileSync(fd);
    if (sha256Hex(content) !== observed.sha256)
      throw new Error(`${observed.path} changed while the host was taking it over; not taken over, tried again next reconcile`);
    return content;
  } finally {
    closeSync(fd);
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
      let seen: Inode;
      if (now) seen = { dev: now.dev, ino: now.ino };
      else {
        await fs.mkdir(hostPath);
        ctx.syncLater(dirname(hostPath));
        // As the directory provider does: what mkdir made must still be there, empty; a directory
        // someone who can write the parent renamed into its place since (root's own, with its files) is not chowned.
        seen = justMade(hostPath, path);
      }
      // The directory just looked at (or made), by inode: one swapped in since is not chowned.
      setOwnerAndMode(hostPath, path, "directory", seen, { uid: original.uid, gid: original.gid, mode: parseInt(original.mode, 8) });
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
    const hostPath = await ctx
      .hostPath(path)
      .catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" || err.code === "ENOTDIR" ? null : Promise.reject(err)));
    return hostPath === null ? { kind: "absent" } : unlinkPath(hostPath, path, ctx);
  },
  async snapshot(path, observed, ctx) {
    return snapshotPath(await ctx.hostPath(path), observed, ctx);
  },
  async restore(path, original, ctx) {
    return restorePath(await ctx.hostPath(path), path, original, ctx);
  },
  async settle(path, ctx) {
    const hostPath = await ctx.hostPath(path).catch(() => null);
    if (hostPath !== null) await removeTemp(hostPath);
  },
};
