// An exclusive lock on the embedded database's directory: two PGlite instances on
// one directory corrupt it silently, so a second process must refuse to start.
import fs from "node:fs";
import path from "node:path";

export class DataDirLockedError extends Error {
  constructor(readonly dir: string, readonly pid: number) {
    super(`the data directory ${dir} is in use by process ${pid}; stop it first, or set MESH_DATA_DIR to another directory`);
    this.name = "DataDirLockedError";
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the lock or throws DataDirLockedError. Returns a release function. */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const lockPath = path.join(dir, "mesh.lock");
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(lockPath, "wx", 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        try {
          if (fs.readFileSync(lockPath, "utf8") === String(process.pid)) fs.unlinkSync(lockPath);
        } catch {
          /* already gone */
        }
      };
      process.once("exit", release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number.parseInt(fs.readFileSync(lockPath, "utf8").trim(), 10);
      if (Number.isFinite(holder) && holder !== process.pid && alive(holder)) throw new DataDirLockedError(dir, holder);
      // Stale lock from a process that died: take it over.
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}`);
}
