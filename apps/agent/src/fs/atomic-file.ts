// The one atomic write of the host: a temp file beside the path (opened exclusively, never through
// what is already there), owner and mode, fsync, close, rename over the path, fsync of the directory.
// A crash leaves the old file or the new one, never half of either. The async variant serves the
// store, the file and service resources, bootstrap and the self-upgrade; the sync one the supervisor,
// which writes from signal handlers. Both take the same steps in the same order.
import { randomBytes } from "node:crypto";
import { closeSync, fchmodSync, fsyncSync, promises as fs, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** The content: bytes, or a writer that fills the open temp file (a streamed download) and throws to abandon it. */
export type Content = string | Buffer | ((fh: FileHandle) => Promise<unknown>);

export interface TempOptions {
  /** The file's mode, set exactly after open (the umask may have narrowed it). */
  mode: number;
  uid?: number;
  gid?: number;
}

export interface ReplaceOptions extends TempOptions {
  /** The temp file's path; a fresh random name beside the target by default. */
  temp?: string;
  /** Called between the fsync of the temp file and the rename (a fail point). */
  beforeRename?: () => void;
  /**
   * How the directory holding the rename is made durable: synced before returning (the default),
   * or handed to a caller that syncs many at once before it records the result.
   */
  syncLater?: (dir: string) => void;
}

/** `.name.<tag>-<12 hex>` beside `path`: a fresh name per write, found again by `isRandomTemp`. */
export function randomTempBeside(path: string, tag = "tmp"): string {
  return join(dirname(path), `.${basename(path)}.${tag}-${randomBytes(6).toString("hex")}`);
}

/** A temp name `randomTempBeside` made (with the default tag), so a leftover can be removed. */
export function isRandomTemp(name: string): boolean {
  return /^\..*\.tmp-[0-9a-f]{12}$/.test(name);
}

/**
 * Writes `temp` whole and durably (open exclusive, content, owner, mode, fsync, close), or removes it
 * and throws. The caller renames it when it is ready to (the self-upgrade puts `.prev` in place first).
 */
export async function writeTempFile(temp: string, content: Content, opts: TempOptions): Promise<void> {
  const fh = await fs.open(temp, "wx", opts.mode);
  try {
    if (typeof content === "function") await content(fh);
    else await fh.writeFile(content);
    // Owner and mode go on before the rename, so the path never shows a half-made file.
    if (opts.uid !== undefined || opts.gid !== undefined) await fh.chown(opts.uid ?? -1, opts.gid ?? -1);
    await fh.chmod(opts.mode);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fs.rm(temp, { force: true });
    throw err;
  }
  await fh.close();
}

/** Replaces `path` with `content` in one step (see the header). */
export async function replaceFile(path: string, content: Content, opts: ReplaceOptions): Promise<void> {
  const temp = opts.temp ?? randomTempBeside(path);
  await writeTempFile(temp, content, opts);
  await renameInto(temp, path, opts);
}

/** Puts a symlink at `path` in one step: made at a temp name, renamed over the path. */
export async function replaceWithSymlink(path: string, target: string, opts: Omit<ReplaceOptions, "mode" | "uid" | "gid">): Promise<void> {
  const temp = opts.temp ?? randomTempBeside(path);
  await fs.symlink(target, temp);
  await renameInto(temp, path, opts);
}

async function renameInto(temp: string, path: string, opts: Omit<ReplaceOptions, "mode">): Promise<void> {
  try {
    opts.beforeRename?.();
    await fs.rename(temp, path);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
  if (opts.syncLater) opts.syncLater(dirname(path));
  else await syncDir(dirname(path));
}

/** A rename is durable only once its directory is synced; a read-only open is enough for fsync. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await fs.open(dir, "r");
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/** `replaceFile` without awaiting: the same steps, for callers that may not yield (signal handlers). */
export function replaceFileSync(path: string, content: string | Buffer, opts: { mode: number; temp?: string; syncDir?: boolean }): void {
  const temp = opts.temp ?? randomTempBeside(path);
  const fd = openSync(temp, "wx", opts.mode);
  try {
    writeFileSync(fd, content);
    fchmodSync(fd, opts.mode);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  if (opts.syncDir ?? true) syncDirSync(dirname(path));
}

export function syncDirSync(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
