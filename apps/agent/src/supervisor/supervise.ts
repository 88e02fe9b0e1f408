// `mesh-host supervise --unit U`: what systemd would do for one unit, where systemd is not
// PID 1. Runs ExecStartPre, ExecStart (its own process group) and ExecStartPost, restarts as
// Restart= says within the start limit, stops with ExecStop, KillSignal and TimeoutStopSec on
// SIGTERM, and writes each state change to the unit's status file. Started detached by the host.
import { spawn, type ChildProcess } from "node:child_process";
import { promises as fs, writeSync } from "node:fs";
import { join } from "node:path";
import { Accounts } from "../resources/accounts";
import { reasonOf } from "../host-error";
import { killGroup, rotateLog, signalGroup } from "./process-group";
import { inServiceDir, isAlive, processRef, readStatus, servicePaths, writeStatusSync, type ProcessRef, type ServiceStatus } from "./service-status";
import { loadUnit } from "./unit-location";
import { parseEnvironmentFile } from "./environment-file";
import { expandCommand, type UnitCommand } from "./exec-line";
import type { UnitSpec } from "./unit-file";

/** systemd's fixed PATH for system services. */
const SERVICE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Exit signals systemd counts as a clean stop of a long-running service. */
const CLEAN_SIGNALS = new Set(["SIGHUP", "SIGINT", "SIGTERM", "SIGPIPE"]);
const LOG_CHECK_MS = 30_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The program could not be started at all (no such file, bad directory, ...). */
  error?: string;
}

interface Launch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  uid?: number;
  gid?: number;
}

export async function superviseCommand(opts: { rootDir: string; unit: string }): Promise<number> {
  const { rootDir, unit } = opts;
  const paths = servicePaths(rootDir, unit);
  const me = processRef(process.pid)!;
  const say = (line: string) => writeSync(1, `${new Date().toISOString()} mesh-host supervise ${unit}: ${line}\n`);
  // A stop can come before anything runs: remembered here, carried out once the loop can.
  let stopFor: string | null = null;
  let onStop = (signal: string) => void (stopFor = signal);
  process.on("SIGTERM", () => onStop("SIGTERM"));
  process.on("SIGINT", () => onStop("SIGINT"));
  process.on("SIGHUP", () => undefined);

  const previous = await readStatus(paths.status).catch(() => null);
  if (previous && previous.supervisor.pid !== process.pid && isAlive(previous.supervisor)) {
    say(`already supervised by pid ${previous.supervisor.pid}; exiting`);
    return 1;
  }
  // A supervisor killed outright (kill -9, OOM) leaves its service running: one copy only.
  if (previous?.main && isAlive(previous.main)) {
    say(`pid ${previous.main.pid} of the last run was still running; stopping it`);
    await killGroup(previous.main, "SIGTERM", 10_000);
  }

  let status: ServiceStatus = { unit, supervisor: me, main: null, state: "activating", since: now(), restarts: 0, result: "starting" };
  const set = (change: Partial<ServiceStatus>) => {
    const stateChanged = change.state !== undefined && change.state !== status.state;
    status = { ...status, ...change, ...(stateChanged ? { since: now() } : {}) };
    writeStatusSync(paths.status, status);
  };
  set({});

  let spec: UnitSpec;
  try {
    spec = await loadUnit(rootDir, unit);
  } catch (err) {
    say(reasonOf(err));
    set({ state: "failed", result: reasonOf(err) });
    return 1;
  }
  if (spec.notEnforced.length) say(`not enforced without systemd: ${spec.notEnforced.join(", ")}`);
  if (spec.ignored.length) say(`unknown directives ignored: ${spec.ignored.join(", ")}`);

  const logCheck = setInterval(() => {
    try {
      inServiceDir(paths.log, rotateLog);
    } catch {
      /* the log directory is gone or unsafe: the next check tries again */
    }
  }, LOG_CHECK_MS);
  let launch: Omit<Launch, "argv"> = { cwd: rootDir, env: {} };
  let current: { ref: ProcessRef; exit: Promise<Exit>; main: boolean } | null = null;
  /** Process groups of every command started and not yet ended (main, pre, post, stop). */
  const groups = new Set<number>();
  /** Whatever went wrong in the supervisor itself: nothing it started is left behind, and the status says so. */
  const fatal = (err: unknown): number => {
    say(`supervisor failed: ${reasonOf(err)}`);
    for (const pgid of groups) signalGroup(pgid, "SIGKILL");
    try {
      set({ state: "failed", main: null, result: `supervisor failed: ${reasonOf(err)}` });
    } catch {
      // the status cannot be written either; the host sees a dead supervisor and reports failed
    }
    clearInterval(logCheck);
    return 1;
  };
  let stopping = false;
  let wake: (() => void) | null = null;
  let stopped!: () => void;
  const stopDone = new Promise<void>((r) => (stopped = r));

  /** Start one command in its own process group; resolves with how it ended. */
  async function run(cmd: UnitCommand, main: boolean, onStarted?: (ref: ProcessRef) => void): Promise<Exit> {
    const { child, exit } = launchCommand(cmd, launch, {}, groups);
    // Known to stop() from the moment it exists, so a stop in the spawn window reaches it.
    const early = child?.pid ? processRef(child.pid) : null;
    if (early) current = { ref: early, exit, main };
    const spawned = child ? await Promise.race([new Promise<boolean>((r) => child.once("spawn", () => r(true))), exit.then(() => false)]) : false;
    const ref = spawned && child?.pid ? (early ?? processRef(child.pid)) : null;
    if (!ref) {
      current = null;
      return exit;
    }
    current = { ref, exit, main };
    if (stopping) return exit; // stop() has it; it must not be reported as started
    if (main) {
      set({ state: "active", main: ref, result: `started pid ${ref.pid}` });
      onStarted?.(ref);
    }
    const ended = await exit;
    current = null;
    return ended;
  }

  async function stop(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping`);
    const wasActive = status.state === "active";
    set({ state: "deactivating", result: "stopping" });
    wake?.();
    const running = current as { ref: ProcessRef; exit: Promise<Exit>; main: boolean } | null;
    // ExecStop runs for a running main process, and for a oneshot that remained after it ran (its teardown).
    const remained = !running && wasActive && spec.type === "oneshot";
    if (running?.main || remained) {
      for (const cmd of spec.execStop) {
        const e = await runBounded(cmd, running ? { MAINPID: String(running.ref.pid) } : {}, spec.timeoutStopMs);
        if (!succeeded(e, spec)) say(`ExecStop ${describe(e)}`);
      }
    }
    if (running) {
      const how = await killGroup(running.ref, spec.killSignal, bounded(spec.timeoutStopMs), spec.killMode !== "control-group");
      if (how === "killed") say(`still running after TimeoutStopSec; killed`);
    }
    // ExecStartPost and anything else still running of this unit goes with it.
    for (const pgid of groups) signalGroup(pgid, "SIGKILL");
    set({ state: "inactive", main: null, result: "stopped" });
    stopped();
  }

  async function startPost(ref: ProcessRef): Promise<void> {
    for (const cmd of spec.execStartPost) {
      if (stopping) return;
      const e = await runBounded(cmd, { MAINPID: String(ref.pid) }, 90_000);
      if (!succeeded(e, spec) && !cmd.ignoreFailure) say(`ExecStartPost ${describe(e)}`);
    }
  }

  /** ExecStop runs while the main process still does; it gets the stop timeout, then is killed. */
  async function runBounded(cmd: UnitCommand, extraEnv: Record<string, string>, timeoutMs: number): Promise<Exit> {
    const { child, exit } = launchCommand(cmd, launch, extraEnv, groups);
    const timer = setTimeout(() => child?.pid && signalGroup(child.pid, "SIGKILL"), bounded(timeoutMs));
    const ended = await exit;
    clearTimeout(timer);
    return ended;
  }

  let failedHard: unknown = null;
  const stopSafely = (signal: string) =>
    void stop(signal).catch((err) => {
      failedHard = err;
      stopped();
    });
  onStop = stopSafely;
  if (stopFor) stopSafely(stopFor);
  try {
    const code = await loop();
    if (failedHard) return fatal(failedHard);
    // The service is over: nothing of it (an ExecStartPost still running, ...) outlives it.
    for (const pgid of groups) signalGroup(pgid, "SIGKILL");
    clearInterval(logCheck);
    return code;
  } catch (err) {
    return fatal(err);
  }

  async function loop(): Promise<number> {

  const starts: number[] = [];
  let code = 0;
  for (;;) {
    if (stopping) break;
    // Start limit: more than StartLimitBurst starts within StartLimitIntervalSec is a failure.
    const t = Date.now();
    starts.push(t);
    while (starts.length && starts[0]! < t - spec.startLimitIntervalMs) starts.shift();
    if (starts.length > spec.startLimitBurst) {
      say("start request repeated too quickly; giving up");
      set({ state: "failed", main: null, result: `start request repeated too quickly (${status.result})` });
      code = 1;
      break;
    }
    set({ state: "activating" });

    let outcome: Exit | null = null;
    // Like systemd, EnvironmentFile= (and the user's entry) are read again at every start.
    try {
      launch = await launchContext(rootDir, spec);
    } catch (err) {
      outcome = { code: null, signal: null, error: reasonOf(err) };
    }
    for (const cmd of outcome ? [] : spec.execStartPre) {
      const e = await run(cmd, false);
      if (stopping) break;
      if (!succeeded(e, spec) && !cmd.ignoreFailure) {
        outcome = { ...e, error: `ExecStartPre ${describe(e)}` };
        break;
      }
    }
    if (stopping) break;

    if (!outcome && spec.type === "oneshot") {
      for (const cmd of spec.execStart) {
        const e = await run(cmd, false);
        if (stopping) break;
        if (!succeeded(e, spec) && !cmd.ignoreFailure) {
          outcome = e;
          break;
        }
      }
      if (stopping) break;
      if (!outcome) {
        if (spec.remainAfterExit) {
          set({ state: "active", result: "ran to completion (RemainAfterExit)" });
          await stopDone;
          break;
        }
        outcome = { code: 0, signal: null };
      }
    } else if (!outcome) {
      const main = spec.execStart[0]!;
      // ExecStartPost runs once the main process has started, beside it.
      let mainRef: ProcessRef | null = null;
      outcome = await run(main, true, (ref) => {
        mainRef = ref;
        void startPost(ref);
      });
      if (stopping) break;
      // Like systemd between runs: what the main process left in its group is stopped too.
      if (mainRef) await killGroup(mainRef, spec.killSignal, bounded(spec.timeoutStopMs), spec.killMode === "process");
      if (!main.ignoreFailure || outcome.error) say(`main process ${describe(outcome)}`);
    }

    const clean = succeeded(outcome, spec) && !outcome.error;
    set({ main: null, result: outcome.error ?? describe(outcome) });
    if (!shouldRestart(spec.restart, clean, outcome)) {
      set({ state: clean ? "inactive" : "failed" });
      code = clean ? 0 : 1;
      break;
    }
    set({ state: "activating", restarts: status.restarts + 1, result: `${status.result}; restarting in ${spec.restartMs} ms` });
    await new Promise<void>((r) => {
      const timer = setTimeout(r, spec.restartMs);
      wake = () => (clearTimeout(timer), r());
    });
    wake = null;
    if (stopping) break;
  }
  if (stopping) await stopDone;
  return code;
  }
}

/**
 * One command of the unit in its own process group, with the unit's directory, environment and
 * identity; its group is in `groups` while it runs. Never throws: a command that cannot even be
 * spawned (a NUL byte in an argument, ...) ends with `error`.
 */
function launchCommand(cmd: UnitCommand, launch: Omit<Launch, "argv">, extraEnv: Record<string, string>, groups: Set<number>): { child: ChildProcess | null; exit: Promise<Exit> } {
  const env = { ...launch.env, ...extraEnv };
  let argv: string[] = [];
  let child: ChildProcess;
  try {
    argv = expandCommand(cmd, env);
    child = spawn(argv[0]!, argv.slice(1), { cwd: launch.cwd, env, uid: launch.uid, gid: launch.gid, detached: true, stdio: ["ignore", 1, 2] });
  } catch (err) {
    return { child: null, exit: Promise.resolve({ code: null, signal: null, error: `cannot run ${argv[0] ?? "the command"}: ${reasonOf(err)}` }) };
  }
  const pgid = child.pid;
  if (pgid) groups.add(pgid);
  const exit = new Promise<Exit>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (err) => resolve({ code: null, signal: null, error: `cannot run ${argv[0]}: ${reasonOf(err)}` }));
  });
  void exit.then(() => pgid && groups.delete(pgid));
  return { child, exit };
}

/** The process's working directory, environment and identity, as the unit gives them. */
async function launchContext(rootDir: string, spec: UnitSpec): Promise<Omit<Launch, "argv">> {
  const accounts = new Accounts(rootDir);
  const user = spec.user ? await accounts.user(spec.user) : null;
  const gid = spec.group ? await accounts.gid(spec.group) : user?.gid;
  const env: Record<string, string> = {
    PATH: SERVICE_PATH,
    HOME: user?.home ?? "/root",
    USER: spec.user ?? "root",
    LOGNAME: spec.user ?? "root",
    ...spec.environment,
  };
  // EnvironmentFile= wins over Environment=, as in systemd.
  for (const file of spec.environmentFiles) {
    let text: string;
    try {
      text = await fs.readFile(join(rootDir, file.path), "utf8");
    } catch (err) {
      if (file.optional && (err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new Error(`EnvironmentFile=${file.path}: ${reasonOf(err)}`);
    }
    Object.assign(env, parseEnvironmentFile(text));
  }
  let cwd = rootDir;
  if (spec.workingDirectory) {
    const dir = join(rootDir, spec.workingDirectory.path);
    const ok = await fs.stat(dir).then((s) => s.isDirectory(), () => false);
    if (ok) cwd = dir;
    else if (!spec.workingDirectory.optional) throw new Error(`WorkingDirectory=${spec.workingDirectory.path}: not a directory`);
  }
  return { cwd, env, ...(user ? { uid: user.uid } : {}), ...(gid !== undefined ? { gid } : {}) };
}

function succeeded(e: Exit, spec: UnitSpec): boolean {
  if (e.error) return false;
  if (e.signal) return spec.type !== "oneshot" && CLEAN_SIGNALS.has(e.signal);
  return e.code === 0 || (e.code !== null && spec.successExitStatus.includes(e.code));
}

function shouldRestart(policy: UnitSpec["restart"], clean: boolean, e: Exit): boolean {
  const uncleanSignal = !clean && e.signal !== null;
  switch (policy) {
    case "no":
      return false;
    case "always":
      return true;
    case "on-success":
      return clean;
    case "on-failure":
      return !clean;
    case "on-abnormal":
      return uncleanSignal;
    case "on-abort":
      return uncleanSignal;
  }
}

function describe(e: Exit): string {
  if (e.error) return e.error;
  return e.signal ? `killed by ${e.signal}` : `exited with status ${e.code}`;
}

function bounded(ms: number): number {
  return Number.isFinite(ms) ? ms : 2 ** 31 - 1;
}

function now(): string {
  return new Date().toISOString();
}
