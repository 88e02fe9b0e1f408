// UnitProcesses for tests: programs that live only in memory and are started, spawned, signalled
// and ended as the test scripts them, with their timeouts on the injected clock, so a race in the
// supervisor is played out one step at a time. Every event is recorded in order for the test to read.
import type { Clock } from "../clock";
import { describeExit, type Exit } from "./command-exit";
import type { ProcessRef } from "./service-status";
import type { Launch, StartedCommand, UnitProcesses } from "./unit-processes";

/** How a program behaves, looked up by its whole command line, else by the path it is started as (argv[0]). */
export interface FakeProgram {
  /** It exists (it has a pid) but does not run until the test calls `spawn()` on it: the spawn window. */
  holdSpawn?: boolean;
  /** It cannot even be created (as spawn throws for a NUL byte in an argument); the reason. */
  cannotStart?: string;
  /** It ends by itself this long after it started running, with `exitCode`; without it, it runs until signalled. */
  runsForMs?: number;
  exitCode?: number;
  /** Signals it ignores (never SIGKILL). */
  ignores?: NodeJS.Signals[];
  /** It leaves a worker in its group when it ends, which ignores these signals. */
  leavesWorker?: { ignores: NodeJS.Signals[] };
}

export class FakeCommand {
  private mainAlive = true;
  private workerAlive = false;
  private spawnedNow!: (v: boolean) => void;
  private exitNow!: (e: Exit) => void;
  private watchers: (() => void)[] = [];
  readonly spawned = new Promise<boolean>((r) => (this.spawnedNow = r));
  readonly exit = new Promise<Exit>((r) => (this.exitNow = r));

  constructor(
    readonly pid: number,
    readonly argv: string[],
    readonly launch: Launch,
    private readonly program: FakeProgram,
    private readonly clock: Clock,
    private readonly record: (event: string) => void,
  ) {}

  get name(): string {
    return this.argv[0]!;
  }
  get alive(): boolean {
    return this.mainAlive;
  }
  get groupAlive(): boolean {
    return this.mainAlive || this.workerAlive;
  }

  /** The end of the spawn window: the program runs. */
  spawn(): void {
    if (!this.mainAlive) return;
    this.record(`${this.name} runs`);
    this.spawnedNow(true);
    if (this.program.runsForMs !== undefined) this.clock.setTimeout(() => this.end({ code: this.program.exitCode ?? 0, signal: null }), this.program.runsForMs);
  }

  /** A signal to its group: each of its processes that does not ignore it ends. */
  deliver(signal: NodeJS.Signals, onlyMain = false): void {
    if (!this.groupAlive) return;
    this.record(`${signal} to ${this.name}${onlyMain ? " (main only)" : ""}`);
    if (this.workerAlive && !onlyMain && (signal === "SIGKILL" || !this.program.leavesWorker!.ignores.includes(signal))) {
      this.workerAlive = false;
      this.changed();
    }
    if (this.mainAlive && (signal === "SIGKILL" || !this.program.ignores?.includes(signal))) this.end({ code: null, signal });
  }

  end(exit: Exit): void {
    if (!this.mainAlive) return;
    this.mainAlive = false;
    this.workerAlive = !!this.program.leavesWorker;
    this.record(`${this.name} ended: ${describeExit(exit)}`);
    this.spawnedNow(false);
    this.exitNow(exit);
    this.changed();
  }

  /** Resolves at the next change (the program or its worker ended). */
  whenChanged(): Promise<void> {
    return new Promise((r) => this.watchers.push(r));
  }

  private changed(): void {
    const watchers = this.watchers;
    this.watchers = [];
    for (const w of watchers) w();
  }
}

export class FakeUnitProcesses implements UnitProcesses {
  readonly commands: FakeCommand[] = [];
  /** What happened, in order: "start /bin/x", "/bin/x runs", "SIGTERM to /bin/x", "/bin/x ended: ...". */
  readonly events: string[] = [];
  private nextPid = 1000;

  constructor(
    private readonly clock: Clock,
    private readonly programs: Record<string, FakeProgram> = {},
  ) {}

  /** The last command started as `name`. */
  command(name: string): FakeCommand {
    const found = this.commands.filter((c) => c.name === name).at(-1);
    if (!found) throw new Error(`${name} was never started`);
    return found;
  }

  /** The programs started, by name, in order. */
  get started(): string[] {
    return this.commands.map((c) => c.name);
  }

  start(argv: string[], launch: Launch): StartedCommand {
    const program = this.programs[argv.join(" ")] ?? this.programs[argv[0]!] ?? {};
    this.events.push(`start ${argv.join(" ")}`);
    if (program.cannotStart !== undefined) {
      const exit: Exit = { code: null, signal: null, error: `cannot run ${argv[0]}: ${program.cannotStart}` };
      this.events.push(`${argv[0]} ended: ${describeExit(exit)}`);
      return { pid: null, spawned: Promise.resolve(false), exit: Promise.resolve(exit) };
    }
    const cmd = new FakeCommand(this.nextPid++, argv, launch, program, this.clock, (e) => this.events.push(e));
    this.commands.push(cmd);
    // A real spawn reports after the current turn; a held one waits for the test.
    if (!program.holdSpawn) void Promise.resolve().then(() => cmd.spawn());
    return { pid: cmd.pid, spawned: cmd.spawned, exit: cmd.exit };
  }

  ref(pid: number): ProcessRef | null {
    const cmd = this.byPid(pid);
    return cmd?.alive ? { pid, startTime: `t${pid}` } : null;
  }

  signalGroup(pgid: number, signal: NodeJS.Signals): void {
    this.byPid(pgid)?.deliver(signal);
  }

  /** As process-group.ts's killGroup: the signal, the wait (on the clock) for the group to go, then SIGKILL. */
  async killGroup(main: ProcessRef, signal: NodeJS.Signals, timeoutMs: number, onlyMainFirst = false): Promise<"exited" | "killed"> {
    const cmd = this.byPid(main.pid)!;
    const gone = () => !cmd.alive && (onlyMainFirst || !cmd.groupAlive);
    if (onlyMainFirst && cmd.alive) cmd.deliver(signal, true);
    else cmd.deliver(signal);
    let timer: unknown;
    const timedOut = new Promise<void>((r) => (timer = this.clock.setTimeout(r, timeoutMs)));
    let expired = false;
    void timedOut.then(() => (expired = true));
    while (!gone() && !expired) await Promise.race([cmd.whenChanged(), timedOut]);
    this.clock.clearTimeout(timer);
    const killed = !gone();
    cmd.deliver("SIGKILL");
    return killed ? "killed" : "exited";
  }

  private byPid(pid: number): FakeCommand | undefined {
    return this.commands.find((c) => c.pid === pid);
  }
}
