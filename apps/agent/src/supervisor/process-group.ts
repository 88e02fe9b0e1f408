// A service runs as the leader of its own process group, so stopping it reaches
// everything it started (systemd's KillMode=control-group, as near as a group gets).
import { promises as fs } from "node:fs";
import { isAlive, type ProcessRef } from "./service-status";

/** A service's log is kept to this size; the older half lives on as LOG.1. */
export const MAX_LOG_BYTES = 8 * 1024 * 1024;

/** Whether any process of the group is left. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/**
 * `signal` to the whole group, then SIGKILL to whatever is left after `timeoutMs`.
 * Resolves when the main process and the rest of its group are gone.
 */
export async function killGroup(main: ProcessRef, signal: NodeJS.Signals, timeoutMs: number, onlyMainFirst = false): Promise<"exited" | "killed"> {
  if (isAlive(main)) {
    if (onlyMainFirst) process.kill(main.pid, signal);
    else signalGroup(main.pid, signal);
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(main) && (onlyMainFirst || !groupAlive(main.pid))) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const killed = isAlive(main);
  signalGroup(main.pid, "SIGKILL");
  while (isAlive(main)) await new Promise((r) => setTimeout(r, 10));
  return killed ? "killed" : "exited";
}

/** Keep LOG under MAX_LOG_BYTES: copy it to LOG.1 and truncate it in place (writers hold it open in append mode). */
export async function rotateLog(log: string): Promise<void> {
  let size = 0;
  try {
    size = (await fs.stat(log)).size;
  } catch {
    return;
  }
  if (size <= MAX_LOG_BYTES) return;
  await fs.copyFile(log, `${log}.1`);
  await fs.truncate(log, 0);
}
