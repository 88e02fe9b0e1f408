/// <reference path="./fs-native-extensions.d.ts" />
// An exclusive lock on the embedded database's directory: two PGlite instances on one directory
// corrupt it silently, so a second process must refuse to start. The kernel holds the lock.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { tryLock, unlock } from "fs-native-extensions";

/** The lock file, kept in the data directory for good (removing it would let two holders lock two inodes). */
export const LOCK_FILE = "mesh.lock";

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: string,
  ) {
    super(`the data directory ${dir} is in use by another process (${holder}); stop it first, or set MESH_DATA_DIR to another directory`);
    this.name = "DataDirLockedError";
  }
}

/** What the holder wrote into the lock file: a hint for the operator, never a test of liveness. */
function describeHolder(lockPath: string): string {
  let stated = "";
  try {
    stated = fs.readFileSync(lockPath, "utf8").slice(0, 200);
  } catch {
    /* unreadable: say nothing more */
  }
  const m = /^pid (\d+) on (\S+)/.exec(stated);
  return m ? `process ${m[1]} on ${m[2]}, as seen from its own PID namespace` : "its process id is unknown";
}

/**
 * Takes the lock or throws DataDirLockedError. Returns a release function.
 *
 * An open-file-description lock (fcntl F_OFD_SETLK on Linux, flock elsewhere) on `mesh.lock`:
 * the kernel refuses it to any other open of that file, in this process or another, in any PID
 * namespace that sees the same file, and drops it when the holder's descriptor closes, which a
 * process that dies (even by SIGKILL) always does. A PID written in the file is only a hint: a
 * PID file alone let two containers on one volume both start, and a stale one whose PID was
 * reused blocked a start for good.
 */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const lockPath = path.join(dir, LOCK_FILE);
  // Never truncated on open: a refused start must not erase what the holder stated.
  const fd = fs.openSync(lockPath, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  let locked: boolean;
  try {
    locked = tryLock(fd);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  if (!locked) {
    fs.closeSync(fd);
    throw new DataDirLockedError(dir, describeHolder(lockPath));
  }
  fs.ftruncateSync(fd, 0);
  fs.writeSync(fd, `pid ${process.pid} on ${os.hostname()}\n`, 0);
  // The descriptor stays open for the life of the process: closing it is releasing the lock.
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      unlock(fd);
    } finally {
      fs.closeSync(fd);
    }
  };
}
