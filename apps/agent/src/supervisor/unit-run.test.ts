// The unit's run as a state machine, with fake processes and fake timers: each race the supervisor
// once lost is a table here, played out step by step, and no test sleeps. What is asserted is what
// the host and a user see: the status written, the log, and the processes started and signalled.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../clock";
import { FakeUnitProcesses, type FakeProgram } from "./fake-unit-processes";
import type { ServiceStatus } from "./service-status";
import { parseUnitFile } from "./unit-file";
import type { Launch } from "./unit-processes";
import { UnitRun } from "./unit-run";

const LAUNCH: Launch = { cwd: "/srv", env: { PATH: "/usr/bin:/bin" } };
const QUICK: FakeProgram = { runsForMs: 0 };

beforeEach(() => vi.useFakeTimers({ now: new Date("2030-01-01T00:00:00Z") }));
afterEach(() => vi.useRealTimers());

/** Time passes on the fake clock (0: only what is due now), and every promise it settles runs. */
const settle = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

interface Options {
  /** Reading the environment waits until `releaseEnvironment()`. */
  holdEnvironment?: boolean;
  /** Writing this status fails, once (a full disk, a removed directory). */
  failWriteOf?: ServiceStatus["state"];
}

function supervise(service: string, programs: Record<string, FakeProgram> = {}, opts: Options = {}) {
  const spec = parseUnitFile("demo.service", `[Service]\n${service}\n`);
  const processes = new FakeUnitProcesses(systemClock, programs);
  const statuses: ServiceStatus[] = [];
  const log: string[] = [];
  let failWrite = opts.failWriteOf;
  let releaseEnvironment: () => void = () => {};
  const initial: ServiceStatus = {
    unit: "demo.service",
    supervisor: { pid: 1, startTime: "t1" },
    main: null,
    state: "activating",
    since: new Date().toISOString(),
    restarts: 0,
    result: "starting",
  };
  const run = new UnitRun({
    spec,
    status: initial,
    writeStatus: (s) => {
      if (s.state === failWrite) {
        failWrite = undefined;
        throw new Error("no space left on device");
      }
      statuses.push(s);
    },
    say: (line) => log.push(line),
    prepare: () => (opts.holdEnvironment ? new Promise<Launch>((r) => (releaseEnvironment = () => r(LAUNCH))) : Promise.resolve(LAUNCH)),
    processes,
    clock: systemClock,
  });
  let code: number | "running" = "running";
  return {
    run,
    processes,
    statuses,
    log,
    start: () => void run.run().then((c) => (code = c)),
    stop: () => run.stop("SIGTERM"),
    releaseEnvironment: () => releaseEnvironment(),
    /** The supervisor's exit code once the run is over; "running" while it is not. */
    get code() {
      return code;
    },
    get last() {
      return statuses.at(-1)!;
    },
    get states() {
      return statuses.map((s) => s.state);
    },
  };
}

describe("a stop in the spawn window reaches the process, which is never reported started", () => {
  it.each([
    { window: "ExecStartPre", service: "ExecStartPre=/bin/pre\nExecStart=/bin/main\nExecStop=/bin/stop", held: "/bin/pre", started: ["/bin/pre"] },
    // As systemd does for a main process that exists: ExecStop runs with its pid.
    { window: "the main process", service: "ExecStart=/bin/main\nExecStop=/bin/stop $MAINPID", held: "/bin/main", started: ["/bin/main", "/bin/stop"] },
    { window: "a oneshot's ExecStart", service: "Type=oneshot\nExecStart=/bin/job\nExecStop=/bin/stop", held: "/bin/job", started: ["/bin/job"] },
  ])("$window", async ({ service, held, started }) => {
    const s = supervise(service, { [held]: { holdSpawn: true }, "/bin/stop": QUICK });
    s.start();
    await settle();
    expect(s.processes.started).toEqual([held]);
    s.stop();
    await settle();
    expect(s.processes.events).toContain(`SIGTERM to ${held}`);
    expect(s.processes.started).toEqual(started);
    if (held === "/bin/main") expect(s.processes.events).toContain("start /bin/stop 1000");
    expect(s.states).not.toContain("active");
    expect(s.log.join("\n")).not.toMatch(/started pid/);
    expect(s.last).toMatchObject({ state: "inactive", main: null, result: "stopped" });
    expect(s.code).toBe(0);
  });
});

interface StopRow {
  when: string;
  programs: Record<string, FakeProgram>;
  /** How long the run goes on before the stop; null: the stop comes before the run begins. */
  runFor: number | null;
  /** Reading the environment waits until after the stop. */
  holdEnvironment?: boolean;
  /** What the processes last did when the stop came. */
  lastEvent?: string;
  /** The programs that ran before the run ended. */
  ran: string[];
}

describe("a stop that comes before the unit runs is kept and carried out: nothing more starts", () => {
  const service = "ExecStartPre=/bin/pre\nExecStart=/bin/main\nRestart=always\nRestartSec=10\nTimeoutStopSec=5";
  const crashes = { runsForMs: 10, exitCode: 1 };
  it.each<StopRow>([
    { when: "before the run begins", programs: {}, runFor: null, ran: [] },
    { when: "while the environment is read", programs: {}, runFor: 1_000, holdEnvironment: true, ran: [] },
    { when: "while ExecStartPre runs", programs: {}, runFor: 1_000, lastEvent: "/bin/pre runs", ran: ["/bin/pre"] },
    {
      when: "during the restart delay (the delay is cut short)",
      programs: { "/bin/pre": QUICK, "/bin/main": crashes },
      runFor: 1_000,
      lastEvent: "/bin/main ended: exited with status 1",
      ran: ["/bin/pre", "/bin/main"],
    },
    {
      when: "while what the main process left in its group is stopped",
      programs: { "/bin/pre": QUICK, "/bin/main": { ...crashes, leavesWorker: { ignores: ["SIGTERM"] } } },
      runFor: 1_000,
      lastEvent: "SIGTERM to /bin/main",
      ran: ["/bin/pre", "/bin/main"],
    },
  ])("$when", async ({ programs, runFor, holdEnvironment, lastEvent, ran }) => {
    const s = supervise(service, programs, { holdEnvironment });
    if (runFor === null) s.stop();
    s.start();
    await settle(runFor ?? 0);
    if (lastEvent) expect(s.processes.events.at(-1)).toBe(lastEvent);
    s.stop();
    s.releaseEnvironment();
    await settle(5_000);
    expect(s.processes.started).toEqual(ran);
    expect(s.last).toMatchObject({ state: "inactive", main: null, result: "stopped" });
    expect(s.log).toContain("SIGTERM: stopping");
    expect(s.code).toBe(0);
    // Nothing of it is left running.
    for (const c of s.processes.commands) expect(c.groupAlive).toBe(false);
  });
});

describe("a failure inside the supervisor kills what it started and records failed, instead of hanging", () => {
  it.each([
    {
      failure: "the status cannot be written when a stop begins",
      failWriteOf: "deactivating" as const,
      stop: true,
      result: "supervisor failed: no space left on device",
    },
    {
      failure: "the status cannot be written when the main process starts",
      failWriteOf: "active" as const,
      stop: false,
      result: "supervisor failed: no space left on device",
    },
  ])("$failure", async ({ failWriteOf, stop, result }) => {
    const s = supervise("ExecStart=/bin/main\nExecStartPost=/bin/post", {}, { failWriteOf });
    s.start();
    await settle();
    if (stop) s.stop();
    await settle();
    expect(s.code).toBe(1);
    expect(s.last).toMatchObject({ state: "failed", main: null, result });
    expect(s.log).toContain(result);
    for (const c of s.processes.commands) expect(c.groupAlive).toBe(false);
    expect(s.processes.events).toContain("SIGKILL to /bin/main");
  });

  it("a command that cannot even be spawned fails the start and ends the run", async () => {
    const s = supervise("ExecStart=/bin/main", { "/bin/main": { cannotStart: "invalid argument" } });
    s.start();
    await settle();
    expect(s.code).toBe(1);
    expect(s.last).toMatchObject({ state: "failed", main: null, result: "cannot run /bin/main: invalid argument" });
    expect(s.log).toContain("main process cannot run /bin/main: invalid argument");
  });
});

describe("restarts and the start limit, on the clock", () => {
  it("restarts after exactly RestartSec, counting restarts", async () => {
    const s = supervise("ExecStart=/bin/main\nRestart=on-failure\nRestartSec=2", { "/bin/main": { runsForMs: 1_000, exitCode: 3 } });
    s.start();
    await settle();
    expect(s.last).toMatchObject({ state: "active", main: { pid: 1000 }, result: "started pid 1000" });
    await settle(1_000);
    expect(s.last).toMatchObject({ state: "activating", restarts: 1, result: "exited with status 3; restarting in 2000 ms" });
    await settle(1_999);
    expect(s.processes.started).toEqual(["/bin/main"]);
    await settle(1);
    expect(s.processes.started).toEqual(["/bin/main", "/bin/main"]);
    expect(s.last).toMatchObject({ state: "active", restarts: 1, main: { pid: 1001 } });
  });

  it("gives up after StartLimitBurst starts within StartLimitIntervalSec", async () => {
    const s = supervise("ExecStart=/bin/crash\nRestart=always\nRestartSec=0.1", { "/bin/crash": { runsForMs: 0, exitCode: 3 } });
    s.start();
    await settle(1_000);
    expect(s.code).toBe(1);
    expect(s.processes.started).toHaveLength(5);
    expect(s.last).toMatchObject({ state: "failed", restarts: 5, result: "start request repeated too quickly (exited with status 3; restarting in 100 ms)" });
    expect(s.log).toContain("start request repeated too quickly; giving up");
  });

  it("starts spread wider than StartLimitIntervalSec never hit the limit", async () => {
    const s = supervise("ExecStart=/bin/crash\nRestart=always\nRestartSec=3", { "/bin/crash": { runsForMs: 0, exitCode: 3 } });
    s.start();
    await settle(60_000);
    expect(s.code).toBe("running");
    expect(s.processes.started.length).toBeGreaterThan(6);
  });

  it.each([
    { restart: "no", exit: { exitCode: 1 }, restarted: false, state: "failed", code: 1 },
    { restart: "on-failure", exit: { exitCode: 0 }, restarted: false, state: "inactive", code: 0 },
    { restart: "on-failure", exit: { exitCode: 1 }, restarted: true },
    { restart: "on-success", exit: { exitCode: 0 }, restarted: true },
    { restart: "always", exit: { exitCode: 0 }, restarted: true },
  ])("Restart=$restart after exit $exit.exitCode: restarted $restarted", async ({ restart, exit, restarted, state, code }) => {
    const s = supervise(`ExecStart=/bin/main\nRestart=${restart}\nRestartSec=1`, { "/bin/main": { runsForMs: 0, ...exit } });
    s.start();
    await settle(1_000);
    expect(s.processes.started).toHaveLength(restarted ? 2 : 1);
    if (!restarted) expect({ state: s.last.state, code: s.code }).toEqual({ state, code });
  });
});

describe("stopping: ExecStop, TimeoutStopSec and the kill", () => {
  it("SIGKILLs a main process that ignores the stop signal, exactly TimeoutStopSec later, and says so", async () => {
    const s = supervise("ExecStart=/bin/main\nTimeoutStopSec=5", { "/bin/main": { ignores: ["SIGTERM"] } });
    s.start();
    await settle();
    s.stop();
    await settle(4_999);
    expect(s.processes.events).not.toContain("SIGKILL to /bin/main");
    expect(s.last.state).toBe("deactivating");
    await settle(1);
    expect(s.processes.events).toContain("SIGKILL to /bin/main");
    expect(s.log).toContain("still running after TimeoutStopSec; killed");
    expect(s.last).toMatchObject({ state: "inactive", result: "stopped" });
    expect(s.code).toBe(0);
  });

  it("runs ExecStop with $MAINPID first, gives it TimeoutStopSec, then signals the main process with KillSignal", async () => {
    const s = supervise("ExecStart=/bin/main\nExecStop=/bin/stop $MAINPID\nTimeoutStopSec=3\nKillSignal=SIGINT", { "/bin/stop": {} });
    s.start();
    await settle();
    s.stop();
    await settle(3_000);
    expect(s.processes.events.filter((e) => !e.endsWith(" runs"))).toEqual([
      "start /bin/main",
      "start /bin/stop 1000",
      "SIGKILL to /bin/stop",
      "/bin/stop ended: killed by SIGKILL",
      "SIGINT to /bin/main",
      "/bin/main ended: killed by SIGINT",
    ]);
    expect(s.processes.command("/bin/stop").launch.env.MAINPID).toBe("1000");
    expect(s.log).toContain("ExecStop killed by SIGKILL");
    expect(s.last).toMatchObject({ state: "inactive", result: "stopped" });
  });

  it("KillMode=mixed signals the main process alone first, then SIGKILLs the rest of its group", async () => {
    const s = supervise("ExecStart=/bin/main\nKillMode=mixed", { "/bin/main": { leavesWorker: { ignores: ["SIGTERM"] } } });
    s.start();
    await settle();
    s.stop();
    await settle();
    expect(s.processes.events).toEqual(expect.arrayContaining(["SIGTERM to /bin/main (main only)", "SIGKILL to /bin/main"]));
    expect(s.processes.command("/bin/main").groupAlive).toBe(false);
    expect(s.code).toBe(0);
  });

  it("ExecStartPost runs beside the main process with $MAINPID and goes with it on a stop", async () => {
    const s = supervise("ExecStart=/bin/main\nExecStartPost=/bin/post $MAINPID");
    s.start();
    await settle();
    expect(s.processes.events).toContain("start /bin/post 1000");
    s.stop();
    await settle();
    expect(s.processes.events).toContain("SIGKILL to /bin/post");
    expect(s.last).toMatchObject({ state: "inactive", result: "stopped" });
  });

  it("a oneshot that remained is active until a stop, which runs its ExecStop without $MAINPID", async () => {
    const s = supervise("Type=oneshot\nRemainAfterExit=yes\nExecStart=/bin/job\nExecStop=/bin/teardown", { "/bin/job": QUICK, "/bin/teardown": QUICK });
    s.start();
    await settle(60_000);
    expect(s.last).toMatchObject({ state: "active", result: "ran to completion (RemainAfterExit)" });
    expect(s.code).toBe("running");
    s.stop();
    await settle();
    expect(s.processes.started).toEqual(["/bin/job", "/bin/teardown"]);
    expect(s.processes.command("/bin/teardown").launch.env.MAINPID).toBeUndefined();
    expect(s.last).toMatchObject({ state: "inactive", result: "stopped" });
    expect(s.code).toBe(0);
  });

  it("a stop after the run has ended leaves its last status as it was", async () => {
    const s = supervise("ExecStart=/bin/main", { "/bin/main": { runsForMs: 10, exitCode: 1 } });
    s.start();
    await settle(10);
    expect(s.code).toBe(1);
    s.stop();
    await settle();
    expect(s.log).not.toContain("SIGTERM: stopping");
    expect(s.last).toMatchObject({ state: "failed", result: "exited with status 1" });
  });

  it("a second stop while one is carried out changes nothing", async () => {
    const s = supervise("ExecStart=/bin/main\nTimeoutStopSec=5", { "/bin/main": { ignores: ["SIGTERM"] } });
    s.start();
    await settle();
    s.stop();
    s.stop();
    await settle(5_000);
    expect(s.log.filter((l) => l === "SIGTERM: stopping")).toHaveLength(1);
    expect(s.processes.events.filter((e) => e === "SIGTERM to /bin/main")).toHaveLength(1);
  });
});
