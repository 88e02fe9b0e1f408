// Where the machine's CPU goes during a phase of the fleet bench: the control plane's process,
// Postgres's processes together, and everything else (the simulator's workers, mostly), sampled
// from /proc once a second. The restart figure is bounded by this on a 2-core machine, so the
// bench prints it beside the figure instead of leaving the cause to be guessed.
import fs from "node:fs";
import os from "node:os";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export function processTicks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0;
  }
}

export function postgresTicks(): number {
  let total = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") total += processTicks(Number(entry));
    } catch {
      // gone between readdir and read
    }
  }
  return total;
}

function machineTicks(): { busy: number; all: number } {
  const cpu = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = cpu[3]! + (cpu[4] ?? 0);
  const all = cpu.reduce((a, b) => a + b, 0);
  return { busy: all - idle, all };
}

export interface CpuSample {
  /** seconds since the sampler started */
  t: number;
  /** cores' worth (1.0 = one core busy) over the last second */
  controlPlane: number;
  postgres: number;
  other: number;
  idle: number;
  /** the wall-clock span (ms) the sample covers, for callers that split it between phases */
  from: number;
  at: number;
  /** a caller-supplied figure at that instant (e.g. links back) */
  mark: number;
}

export class CpuSampler {
  readonly samples: CpuSample[] = [];
  private timer?: NodeJS.Timeout;
  private last?: { at: number; cp: number; pg: number; machine: { busy: number; all: number } };
  private readonly t0 = Date.now();

  constructor(
    private readonly controlPlanePid: () => number,
    private readonly mark: () => number,
  ) {}

  start(): void {
    this.last = this.read();
    this.timer = setInterval(() => this.sample(), 1000);
  }

  stop(): CpuSample[] {
    clearInterval(this.timer);
    return this.samples;
  }

  private read() {
    return { at: Date.now(), cp: processTicks(this.controlPlanePid()), pg: postgresTicks(), machine: machineTicks() };
  }

  private sample(): void {
    const now = this.read();
    const prev = this.last!;
    this.last = now;
    const seconds = (now.at - prev.at) / 1000;
    const cores = (ticks: number) => ticks / TICKS_PER_SECOND / seconds;
    const busy = cores(now.machine.busy - prev.machine.busy);
    const all = (now.machine.all - prev.machine.all) / TICKS_PER_SECOND / seconds;
    const controlPlane = cores(Math.max(0, now.cp - prev.cp));
    const postgres = cores(Math.max(0, now.pg - prev.pg));
    this.samples.push({
      t: Math.round((now.at - this.t0) / 1000),
      from: prev.at,
      at: now.at,
      controlPlane,
      postgres,
      other: Math.max(0, busy - controlPlane - postgres),
      idle: Math.max(0, all - busy),
      mark: this.mark(),
    });
  }
}

/** Means over the samples, in cores' worth, and the machine's core count for scale. */
export function cpuSummary(samples: CpuSample[]): string {
  if (samples.length === 0) return "no CPU samples";
  const mean = (f: (s: CpuSample) => number) => (samples.reduce((a, s) => a + f(s), 0) / samples.length).toFixed(2);
  return `CPU over ${samples.length} s (cores of ${os.cpus().length}): control plane ${mean((s) => s.controlPlane)}, Postgres ${mean((s) => s.postgres)}, simulator and the rest ${mean((s) => s.other)}, idle ${mean((s) => s.idle)}`;
}
