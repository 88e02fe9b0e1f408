// One mesh-host at a time per state dir: `run` and `apply` both write the store,
// so the second one refuses instead of racing the first. A lock left by a dead process is taken over.
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { HostError } from "../host-error";
import { STATE_DIR_NAMES } from "./keys";

const LOCK = STATE_DIR_NAMES.lock;

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Take the state dir's lock; the returned function gives it back. */
export async function lockStateDir(stateDir: string): Promise<() => Promise<void>> {
  const path = join(stateDir, LOCK);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await fs.open(path, "wx", 0o644);
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return async () => {
        await fs.rm(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = parseInt(await fs.readFile(path, "utf8").catch(() => ""), 10);
    if (alive(holder)) {
      throw new HostError("failure", `another mesh-host (pid ${holder}) is using the state dir ${stateDir}; stop it first (lock: ${path})`);
    }
    await fs.rm(path, { force: true });
  }
  throw new HostError("failure", `cannot take the lock ${path}`);
}

/** The live process holding the state dir's lock (a running daemon or apply), or null. */
export async function lockHolder(stateDir: string): Promise<number | null> {
  const holder = parseInt(await fs.readFile(join(stateDir, LOCK), "utf8").catch(() => ""), 10);
  return alive(holder) ? holder : null;
}
