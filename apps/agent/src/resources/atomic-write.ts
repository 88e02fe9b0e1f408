// Replacing a resource's path in one step (fs/atomic-file: temp beside it, fsync, rename), with what
// the resources add: a fixed temp name, so a killed apply leaves one leftover to settle; the
// directory fsynced later, before the result is recorded; the `temp-written` fail point.
import { promises as fs } from "node:fs";
import { basename, dirname, join } from "node:path";
import { failpoint } from "../failpoint";
import { type Content, replaceFile, replaceWithSymlink } from "../fs/atomic-file";

export type { Content } from "../fs/atomic-file";

export function tempBeside(hostPath: string): string {
  return join(dirname(hostPath), `.${basename(hostPath)}.mesh-tmp`);
}

/** An ENOENT because the parent is missing reads as what to declare; anything else as it is. */
async function missingParent(err: unknown, hostPath: string, path: string): Promise<Error> {
  if ((err as NodeJS.ErrnoException).code === "ENOENT" && !(await exists(dirname(hostPath)))) {
    return new Error(`parent directory of ${path} does not exist (declare it as a directory resource)`);
  }
  return err as Error;
}

async function exists(path: string): Promise<boolean> {
  return fs.lstat(path).then(
    () => true,
    () => false,
  );
}

/** `syncLater`: the directory holding the rename is fsynced before the result is recorded (see ProviderContext). */
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
  try {
    await replaceFile(hostPath, content, { ...opts, temp, syncLater, beforeRename: () => failpoint("temp-written") });
  } catch (err) {
    throw await missingParent(err, hostPath, path);
  }
}

/** `syncLater`: the directory holding the rename is fsynced before the result is recorded (see ProviderContext). */
export async function symlinkAtomically(hostPath: string, target: string, path: string, syncLater: (dir: string) => void): Promise<void> {
  const temp = tempBeside(hostPath);
  await fs.rm(temp, { force: true }).catch(() => undefined);
  try {
    await replaceWithSymlink(hostPath, target, { temp, syncLater });
  } catch (err) {
    throw await missingParent(err, hostPath, path);
  }
}
