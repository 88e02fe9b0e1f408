// Replacing a path in one step: write a temp beside it, fsync, rename over it; the
// directory is fsynced before the result is recorded. A fixed temp name leaves one leftover to settle.
import { promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { failpoint } from "../failpoint";

export function tempBeside(hostPath: string): string {
  return join(dirname(hostPath), `.${basename(hostPath)}.mesh-tmp`);
}

function missingParent(err: unknown, path: string): Error {
  if ((err as NodeJS.ErrnoException).code === "ENOENT") {
    return new Error(`parent directory of ${path} does not exist (declare it as a directory resource)`);
  }
  return err as Error;
}

/** The content: bytes, or a writer that fills the open temp file (a streamed download) and throws to abandon it. */
export type Content = Buffer | ((fh: FileHandle) => Promise<unknown>);

export async function writeFileAtomically(
  hostPath: string,
  content: Content,
  opts: { mode: number; uid?: number; gid?: number },
  path: string,
  syncLater: (dir: string) => void,
): Promise<void> {
  const temp = tempBeside(hostPath);
  // Someone may have planted a symlink at the temp name: never open through it.
  await fs.rm(temp, { force: true }).catch(() => undefined);
  let fh;
  try {
    fh = await fs.open(temp, "wx", opts.mode);
  } catch (err) {
    throw missingParent(err, path);
  }
  try {
    if (typeof content === "function") await content(fh);
    else await fh.writeFile(content);
    // Owner and mode go on before the rename, so the path never shows a half-made file.
    if (opts.uid !== undefined || opts.gid !== undefined) await fh.chown(opts.uid ?? -1, opts.gid ?? -1);
    await fh.chmod(opts.mode);
    await fh.sync();
    await fh.close();
    failpoint("temp-written");
    await fs.rename(temp, hostPath);
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fs.rm(temp, { force: true });
    throw err;
  }
  syncLater(dirname(hostPath));
}

/** `syncLater`: the directory holding the rename is fsynced before the result is recorded (see ProviderContext). */
export async function symlinkAtomically(hostPath: string, target: string, path: string, syncLater: (dir: string) => void): Promise<void> {
  const temp = tempBeside(hostPath);
  await fs.rm(temp, { force: true }).catch(() => undefined);
  try {
    await fs.symlink(target, temp);
  } catch (err) {
    throw missingParent(err, path);
  }
  try {
    await fs.rename(temp, hostPath);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
  syncLater(dirname(hostPath));
}

export async function syncDir(dir: string): Promise<void> {
  const dh = await fs.open(dir, "r");
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
