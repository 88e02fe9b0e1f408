// One unit's run under the host's own supervisor, as a state machine: the start sequence
// (ExecStartPre, ExecStart, ExecStartPost), Restart= within the start limit, and a stop that can
// come in any state. Processes and the clock are injected, so every race is a test with fake timers.
import type { Clock } from "../clock";
import { reasonOf } from "../host-error";
import { bounded, describeExit, type Exit, shouldRestart, succeeded } from "./command-exit";
import { expandCommand, type UnitCommand } from "./exec-line";
import type { ProcessRef, ServiceStatus } from "./service-status";
import type { UnitSpec } from "./unit-file";
import type { Launch, StartedCommand, UnitProcesses } from "./unit-processes";
import { wakeableSleep } from "../sleep";

/** How long an ExecStartPost may run beside the main process before it is killed. */
const START_POST_TIMEOUT_MS = 90_000;

/** A command of the start sequence, known to a stop from the moment its process exists. */
interface CommandInFlight {
  ref: ProcessRef;
  exit: Promise<Exit>;
  /** The main process (ExecStart of a service that is not a oneshot): a stop runs ExecStop for it. */
  main: boolean;
}

export type RunState =
  /** Made, not yet running: a stop now is carried out before anything starts. */
  | { kind: "idle" }
  /** A start with no command running: within the start limit, reading the environment, or between two commands. */
  | { kind: "starting" }
  /** A command of the start sequence runs or is being spawned: ExecStartPre, a oneshot's ExecStart, or the main process. */
  | { kind: "running"; command: CommandInFlight }
  /** The main process ended; whatever it left in its group is being stopped before the next start. */
  | { kind: "cleaning-up" }
  /** A oneshot that ran to completion with RemainAfterExit=yes: active, nothing running, until a stop. */
  | { kind: "remained" }
  /** Waiting RestartSec before the next start; `wake` cuts the wait short. */
  | { kind: "restart-wait"; wake: () => void }
  /** A stop is being carried out; the start sequence makes no further move. */
  | { kind: "stopping" }
  /** Over: the start limit, a run Restart= does not repeat, a stop, or a failure of the supervisor itself. */
  | { kind: "ended"; code: number };

export interface UnitRunOptions {
  spec: UnitSpec;
  /** The status as the supervisor first wrote it; every change is written through `writeStatus`. */
  status: ServiceStatus;
  /** Where the host reads the status; a write that throws is a failure of the supervisor. */
  writeStatus: (status: ServiceStatus) => void;
  /** One line in the unit's log. */
  say: (line: string) => void;
  /** Where and as whom the commands run, read again at every start. */
  prepare: () => Promise<Launch>;
  processes: UnitProcesses;
  clock: Clock;
}

export class UnitRun {
  private state: RunState = { kind: "idle" };
  private status: ServiceStatus;
  private launch: Launch = { cwd: "/", env: {} };
  /** Process groups of every command started and not yet ended (main, pre, post, stop). */
  private readonly groups = new Set<number>();
  /** A stop that itself failed: the run ends as a failure of the supervisor. */
  private failure: { err: unknown } | null = null;
  private stopDone!: () => void;
  private readonly stopped = new Promise<void>((r) => (this.stopDone = r));

  constructor(private readonly opts: UnitRunOptions) {
    this.status = opts.status;
  }

  /** The whole run; resolves with the supervisor's exit code, never rejects. */
  async run(): Promise<number> {
    let code: number;
    try {
      code = await this.startSequence();
      if (this.failure) code = this.fail(this.failure.err);
      // The service is over: nothing of it (an ExecStartPost still running, ...) outlives it.
      else this.killAll();
    } catch (err) {
      code = this.fail(err);
    }
    this.state = { kind: "ended", code };
    return code;
  }

  /**
   * SIGTERM or SIGINT: carried out once, from whatever state the run is in (a stop before anything
   * runs included) until it has ended. Never throws; a stop that fails ends the run as a failure of
   * the supervisor.
   */
  stop(signal: string): void {
    const from = this.state;
    if (from.kind === "stopping" || from.kind === "ended") return;
    this.state = { kind: "stopping" };
    this.carryOutStop(signal, from).catch((err: unknown) => {
      // Whatever the start sequence waits for ends now, so the run reaches its end and reports this.
      this.failure = { err };
      this.killAll();
      this.stopDone();
    });
  }

  private async carryOutStop(signal: string, from: RunState): Promise<void> {
    const { spec, say, processes } = this.opts;
    if (from.kind === "restart-wait") from.wake();
    say(`${signal}: stopping`);
    this.set({ state: "deactivating", result: "stopping" });
    const running = from.kind === "running" ? from.command : null;
    // ExecStop runs for a running main process, and for a oneshot that remained after it ran (its teardown).
    if (running?.main || from.kind === "remained") {
      for (const cmd of spec.execStop) {
        const e = await this.runBounded(cmd, running ? { MAINPID: String(running.ref.pid) } : {}, spec.timeoutStopMs);
        if (!succeeded(e, spec)) say(`ExecStop ${describeExit(e)}`);
      }
    }
    if (running) {
      const how = await processes.killGroup(running.ref, spec.killSignal, bounded(spec.timeoutStopMs), spec.killMode !== "control-group");
      if (how === "killed") say(`still running after TimeoutStopSec; killed`);
    }
    // ExecStartPost and anything else still running of this unit goes with it.
    this.killAll();
    this.set({ state: "inactive", main: null, result: "stopped" });
    this.stopDone();
  }

  /** The start sequence, again as Restart= says, until the start limit, a run it does not repeat, or a stop. */
  private async startSequence(): Promise<number> {
    const { spec, say } = this.opts;
    const starts: number[] = [];
    let code = 0;
    for (;;) {
      if (!this.move({ kind: "starting" })) break;
      // Start limit: more than StartLimitBurst starts within StartLimitIntervalSec is a failure.
      const t = this.opts.clock.now();
      starts.push(t);
      while (starts.length && starts[0]! < t - spec.startLimitIntervalMs) starts.shift();
      if (starts.length > spec.startLimitBurst) {
        say("start request repeated too quickly; giving up");
        this.set({ state: "failed", main: null, result: `start request repeated too quickly (${this.status.result})` });
        code = 1;
        break;
      }
      this.set({ state: "activating" });

      let outcome: Exit | null = null;
      // Like systemd, EnvironmentFile= (and the user's entry) are read again at every start.
      try {
        this.launch = await this.opts.prepare();
      } catch (err) {
        outcome = { code: null, signal: null, error: reasonOf(err) };
      }
      if (this.stopping) break; // a stop while the environment was read: nothing of this start runs
      for (const cmd of outcome ? [] : spec.execStartPre) {
        const e = await this.runCommand(cmd, false);
        if (this.stopping) break;
        if (!succeeded(e, spec) && !cmd.ignoreFailure) {
          outcome = { ...e, error: `ExecStartPre ${describeExit(e)}` };
          break;
        }
      }
      if (this.stopping) break;

      if (!outcome && spec.type === "oneshot") {
        for (const cmd of spec.execStart) {
          const e = await this.runCommand(cmd, false);
          if (this.stopping) break;
          if (!succeeded(e, spec) && !cmd.ignoreFailure) {
            outcome = e;
            break;
          }
        }
        if (this.stopping) break;
        if (!outcome) {
          if (spec.remainAfterExit) {
            this.set({ state: "active", result: "ran to completion (RemainAfterExit)" });
            this.move({ kind: "remained" });
            await this.stopped;
            break;
          }
          outcome = { code: 0, signal: null };
        }
      } else if (!outcome) {
        const main = spec.execStart[0]!;
        // ExecStartPost runs once the main process has started, beside it.
        let mainRef: ProcessRef | null = null;
        outcome = await this.runCommand(main, true, (ref) => {
          mainRef = ref;
          void this.startPost(ref);
        });
        if (this.stopping) break;
        // Like systemd between runs: what the main process left in its group is stopped too.
        if (mainRef && this.move({ kind: "cleaning-up" })) {
          await this.opts.processes.killGroup(mainRef, spec.killSignal, bounded(spec.timeoutStopMs), spec.killMode === "process");
        }
        if (this.stopping) break; // a stop while that was done has the last word on the status
        if (!main.ignoreFailure || outcome.error) say(`main process ${describeExit(outcome)}`);
      }

      const clean = succeeded(outcome, spec) && !outcome.error;
      this.set({ main: null, result: outcome.error ?? describeExit(outcome) });
      if (!shouldRestart(spec.restart, clean, outcome)) {
        this.set({ state: clean ? "inactive" : "failed" });
        code = clean ? 0 : 1;
        break;
      }
      this.set({ state: "activating", restarts: this.status.restarts + 1, result: `${this.status.result}; restarting in ${spec.restartMs} ms` });
      const pause = wakeableSleep(spec.restartMs, { clock: this.opts.clock });
      this.move({ kind: "restart-wait", wake: pause.wake });
      await pause.done;
    }
    if (this.stopping) await this.stopped;
    return code;
  }

  /** Start one command of the start sequence in its own process group; resolves with how it ended. */
  private async runCommand(cmd: UnitCommand, main: boolean, onStarted?: (ref: ProcessRef) => void): Promise<Exit> {
    const started = this.launchCommand(cmd, {});
    const { processes } = this.opts;
    // Known to a stop from the moment it exists, so a stop in the spawn window reaches it.
    const early = started.pid ? processes.ref(started.pid) : null;
    if (early) this.move({ kind: "running", command: { ref: early, exit: started.exit, main } });
    const spawned = await started.spawned;
    const ref = spawned && started.pid ? (early ?? processes.ref(started.pid)) : null;
    if (!ref) {
      this.move({ kind: "starting" });
      return started.exit;
    }
    // A stop that came in the spawn window has the process: it must not be reported as started.
    if (!this.move({ kind: "running", command: { ref, exit: started.exit, main } })) return started.exit;
    if (main) {
      this.set({ state: "active", main: ref, result: `started pid ${ref.pid}` });
      onStarted?.(ref);
    }
    const ended = await started.exit;
    this.move({ kind: "starting" });
    return ended;
  }

  private async startPost(ref: ProcessRef): Promise<void> {
    const { spec, say } = this.opts;
    for (const cmd of spec.execStartPost) {
      if (this.stopping) return;
      const e = await this.runBounded(cmd, { MAINPID: String(ref.pid) }, START_POST_TIMEOUT_MS);
      if (!succeeded(e, spec) && !cmd.ignoreFailure) say(`ExecStartPost ${describeExit(e)}`);
    }
  }

  /** ExecStop and ExecStartPost: they get their timeout, then their group is killed. */
  private async runBounded(cmd: UnitCommand, extraEnv: Record<string, string>, timeoutMs: number): Promise<Exit> {
    const { clock, processes } = this.opts;
    const started = this.launchCommand(cmd, extraEnv);
    const timer = clock.setTimeout(() => started.pid && processes.signalGroup(started.pid, "SIGKILL"), bounded(timeoutMs));
    const ended = await started.exit;
    clock.clearTimeout(timer);
    return ended;
  }

  /** One command with the unit's directory, environment and identity; its group is in `groups` while it runs. */
  private launchCommand(cmd: UnitCommand, extraEnv: Record<string, string>): StartedCommand {
    const env = { ...this.launch.env, ...extraEnv };
    const started = this.opts.processes.start(expandCommand(cmd, env), { ...this.launch, env });
    const pgid = started.pid;
    if (pgid) this.groups.add(pgid);
    void started.exit.then(() => pgid && this.groups.delete(pgid));
    return started;
  }

  /** Whatever went wrong in the supervisor itself: nothing it started is left behind, and the status says so. */
  private fail(err: unknown): number {
    this.opts.say(`supervisor failed: ${reasonOf(err)}`);
    this.killAll();
    try {
      this.set({ state: "failed", main: null, result: `supervisor failed: ${reasonOf(err)}` });
    } catch {
      // the status cannot be written either; the host sees a dead supervisor and reports failed
    }
    return 1;
  }

  private killAll(): void {
    for (const pgid of this.groups) this.opts.processes.signalGroup(pgid, "SIGKILL");
  }

  /** The start sequence's one way to move: never out of a stop (the stop has the last word) or out of the end. */
  private move(next: RunState): boolean {
    if (this.state.kind === "stopping" || this.state.kind === "ended") return false;
    this.state = next;
    return true;
  }

  private get stopping(): boolean {
    return this.state.kind === "stopping";
  }

  private set(change: Partial<ServiceStatus>): void {
    const stateChanged = change.state !== undefined && change.state !== this.status.state;
    this.status = { ...this.status, ...change, ...(stateChanged ? { since: new Date(this.opts.clock.now()).toISOString() } : {}) };
    this.opts.writeStatus(this.status);
  }
}
