// One contract for UnitProcesses, run against real processes and against the fake that the run's
// tests use (on fake timers), so the fake cannot drift from what a real program does.
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../clock";
import { FakeUnitProcesses, type FakeProgram } from "./fake-unit-processes";
import { type Launch, realProcesses, type UnitProcesses } from "./unit-processes";

const LAUNCH: Launch = { cwd: "/", env: { PATH: "/usr/bin:/bin" } };
const RUNS = ["/bin/sleep", "1000"];
const EXITS_3 = ["/bin/sh", "-c", "exit 3"];
const IGNORES_TERM = ["/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"];
const NUL_BYTE = ["/bin/echo", "a\0b"];
const NO_SUCH = ["/nonexistent/program"];

const FAKE_PROGRAMS: Record<string, FakeProgram> = {
  [EXITS_3.join(" ")]: { runsForMs: 0, exitCode: 3 },
  [IGNORES_TERM.join(" ")]: { ignores: ["SIGTERM"] },
  [NUL_BYTE.join(" ")]: { cannotStart: "The argument 'args[0]' must be a string without null bytes" },
  [NO_SUCH.join(" ")]: { cannotStart: "ENOENT" },
};

interface Implementation {
  name: string;
  make: () => UnitProcesses;
  /** Time passes: really for real processes, on the fake clock for the fake. */
  pass: (ms: number) => Promise<unknown>;
  fakeTimers: boolean;
  /** Resolves once the process ignores SIGTERM (a shell's trap is set only once it runs). */
  ignoringTerm: (pid: number) => Promise<void>;
}

/** /proc/PID/status's SigIgn mask has SIGTERM (15, bit 14). */
async function procIgnoresTerm(pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const mask = /SigIgn:\s+([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!;
    if ((BigInt(`0x${mask}`) >> 14n) & 1n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`pid ${pid} never ignored SIGTERM`);
}

describe.each<Implementation>([
  { name: "real processes", make: () => realProcesses, pass: (ms) => new Promise((r) => setTimeout(r, ms)), fakeTimers: false, ignoringTerm: procIgnoresTerm },
  {
    name: "the fake",
    make: () => new FakeUnitProcesses(systemClock, FAKE_PROGRAMS),
    pass: (ms) => vi.advanceTimersByTimeAsync(ms),
    fakeTimers: true,
    ignoringTerm: async () => undefined,
  },
])("UnitProcesses: $name", ({ make, pass, fakeTimers, ignoringTerm }) => {
  let processes: UnitProcesses;
  beforeEach(() => {
    if (fakeTimers) vi.useFakeTimers();
    processes = make();
  });
  afterEach(() => vi.useRealTimers());

  it("a program that runs is known by its pid while it runs, and a signal to its group ends it", async () => {
    const c = processes.start(RUNS, LAUNCH);
    expect(c.pid).toBeGreaterThan(0);
    expect(await c.spawned).toBe(true);
    expect(processes.ref(c.pid!)).toMatchObject({ pid: c.pid });
    processes.signalGroup(c.pid!, "SIGTERM");
    expect(await c.exit).toEqual({ code: null, signal: "SIGTERM" });
    expect(processes.ref(c.pid!)).toBeNull();
  });

  it("a program that exits by itself reports its status", async () => {
    const c = processes.start(EXITS_3, LAUNCH);
    const exit = c.exit;
    await pass(10);
    expect(await exit).toEqual({ code: 3, signal: null });
  });

  it("killGroup: a program that goes on the signal has exited; one that ignores it is killed after the timeout", async () => {
    const going = processes.start(RUNS, LAUNCH);
    await going.spawned;
    const gone = processes.killGroup(processes.ref(going.pid!)!, "SIGTERM", 5_000);
    await pass(100);
    expect(await gone).toBe("exited");

    const stubborn = processes.start(IGNORES_TERM, LAUNCH);
    await stubborn.spawned;
    await ignoringTerm(stubborn.pid!);
    const killing = processes.killGroup(processes.ref(stubborn.pid!)!, "SIGTERM", 300);
    await pass(800);
    expect(await killing).toBe("killed");
    expect(await stubborn.exit).toEqual({ code: null, signal: "SIGKILL" });
  });

  it.each([NUL_BYTE, NO_SUCH])("a program that cannot be started (%j): never a throw, an exit that says why", async (...argv) => {
    const c = processes.start(argv, LAUNCH);
    expect(await c.spawned).toBe(false);
    expect((await c.exit).error).toMatch(new RegExp(`^cannot run ${argv[0]}: `));
  });
});
