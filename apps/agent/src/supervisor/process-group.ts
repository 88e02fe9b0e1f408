// A service runs as the leader of its own process group, so stopping it reaches
// everything it started (systemd's KillMode=control-group, as near as a group gets).
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { isAlive, type ProcessRef } from "./service-status";
import { systemClock, type Clock } from "../clock";
import { sleep } from "../sleep";

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
 * `signal` to the whole group (or to the main process alone first, for KillMode=mixed/process),
 * then SIGKILL to whatever is left after `timeoutMs`. The group is signalled even when the main
 * process has already gone (an ExecStop that ended it leaves its workers). Resolves when the
 * group is gone, or 10 s after the SIGKILL for a process that cannot die (uninterruptible sleep).
 */
export async function killGroup(
  main: ProcessRef,
  signal: NodeJS.Signals,
  timeoutMs: number,
  onlyMainFirst = false,
  clock: Clock = systemClock,
): Promise<"exited" | "killed"> {
  const gone = () => !isAlive(main) && (onlyMainFirst || !groupAlive(main.pid));
  if (onlyMainFirst && isAlive(main)) signalProcess(main.pid, signal);
  else if (isAlive(main) || groupAlive(main.pid)) signalGroup(main.pid, signal);
  const deadline = clock.now() + timeoutMs;
  while (!gone() && clock.now() < deadline) await sleep(25, { clock: clock });
  const killed = !gone();
  signalGroup(main.pid, "SIGKILL");
  const last = clock.now() + 10_000;
  while (isAlive(main) && clock.now() < last) await sleep(10, { clock: clock });
  return killed ? "killed" : "exited";
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Keep the log at `at` (a path in its checked directory, see inServiceDir) under MAX_LOG_BYTES: copy it
 * to `at`.1 and truncate it in place (writers hold it open in append mode). Neither name is ever
 * followed if it is a symlink. Synchronous, so it runs while inServiceDir holds the directory.
 */
export function rotateLog(at: string): void {
  let fd: number;
  try {
    fd = openSync(at, constants.O_RDWR | constants.O_NOFOLLOW);
  } catch {
    return; // not there yet, or a symlink: nothing of ours to rotate
  }
  try {
    if (fstatSync(fd).size <= MAX_LOG_BYTES) return;
    const old = openSync(`${at}.1`, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o640);
    try {
      writeFileSync(old, readFileSync(fd));
    } finally {
      closeSync(old);
    }
    ftruncateSync(fd, 0);
  } finally {
    closeSync(fd);
  }
}

/** The log a supervisor writes to (at `at`, named `log` in messages), opened for appending; a symlink there is refused. */
export function openLogSync(at: string, log = at): number {
  try {
    return openSync(at, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o640);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new Error(`${log} is a symlink; refusing to write a service's log through it`);
    throw err;
  }
}
