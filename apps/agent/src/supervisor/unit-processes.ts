// How the supervisor starts and signals a unit's commands, behind one small interface so the
// unit's run is tested with fake processes. Not the Runner: a service's commands are long-lived,
// write straight to the unit's log, run with the unit's own environment and identity, and are
// known (by pid) before they are known to run; the Runner runs a program to completion and keeps its output.
import { spawn } from "node:child_process";
import { reasonOf } from "../host-error";
import type { Exit } from "./command-exit";
import { killGroup, signalGroup } from "./process-group";
import { processRef, type ProcessRef } from "./service-status";

/** Where and as whom a command runs: the unit's directory, environment and identity. */
export interface Launch {
  cwd: string;
  env: Record<string, string>;
  uid?: number;
  gid?: number;
}

/** A command started as the leader of its own process group. */
export interface StartedCommand {
  /** Known from the moment the process exists, before it is known to run; null when it could not be created. */
  pid: number | null;
  /** True once the program runs; false when it ended (or could not start) first. */
  spawned: Promise<boolean>;
  /** How it ended; never rejects (a program that cannot start ends with `error`). */
  exit: Promise<Exit>;
}

export interface UnitProcesses {
  /** Never throws: a command that cannot even be spawned (a NUL byte in an argument, ...) ends with `error`. */
  start(argv: string[], launch: Launch): StartedCommand;
  /** The process as the kernel knows it (pid + start time), or null when there is none. */
  ref(pid: number): ProcessRef | null;
  signalGroup(pgid: number, signal: NodeJS.Signals): void;
  /** process-group.ts's killGroup: the signal, then SIGKILL after timeoutMs; says whether it came to that. */
  killGroup(main: ProcessRef, signal: NodeJS.Signals, timeoutMs: number, onlyMainFirst?: boolean): Promise<"exited" | "killed">;
}

/** Real processes: child_process.spawn, detached (its own process group), output to the supervisor's log. */
export const realProcesses: UnitProcesses = {
  start(argv, launch) {
    let child;
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd: launch.cwd, env: launch.env, uid: launch.uid, gid: launch.gid, detached: true, stdio: ["ignore", 1, 2] });
    } catch (err) {
      const exit = Promise.resolve<Exit>({ code: null, signal: null, error: `cannot run ${argv[0] ?? "the command"}: ${reasonOf(err)}` });
      return { pid: null, spawned: Promise.resolve(false), exit };
    }
    const exit = new Promise<Exit>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.once("error", (err) => resolve({ code: null, signal: null, error: `cannot run ${argv[0]}: ${reasonOf(err)}` }));
    });
    const spawned = Promise.race([new Promise<boolean>((r) => child.once("spawn", () => r(true))), exit.then(() => false)]);
    return { pid: child.pid ?? null, spawned, exit };
  },
  ref: processRef,
  signalGroup,
  killGroup,
};
