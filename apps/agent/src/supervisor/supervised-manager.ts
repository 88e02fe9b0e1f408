// The host's own service manager, for machines where systemd is not PID 1 (containers):
// each running unit has one detached `mesh-host supervise` process that runs it, restarts it
// as the unit says, and writes its state; the host reads that state and signals the supervisor.
import { spawn } from "node:child_process";
import { closeSync, constants, promises as fs } from "node:fs";
import { dirname } from "node:path";
import type { ServiceManager } from "../resources/service-manager";
import { disableUnit, enableUnit, enablement, loadUnit } from "./unit-location";
import type { UnitSpec } from "./unit-file";
import { inServiceDir, isAlive, readStatus, servicePaths, writeStatusSync, type ServiceStatus } from "./service-status";
import { killGroup, openLogSync, rotateLog } from "./process-group";
import { isoNow, systemClock, type Clock } from "../clock";
import { sleep } from "../sleep";

/** How long a start may take before the host gives up waiting (systemd's TimeoutStartSec default). */
const START_TIMEOUT_MS = 90_000;
const POLL_MS = 10;

export interface SupervisedManagerOptions {
  rootDir: string;
  /** argv that runs this host's binary: `[...command, "supervise", ...]` starts a supervisor. */
  command: () => string[];
  /** Time and the waits between polls (the real clock by default). */
  clock?: Clock;
}

export function supervisedManager(opts: SupervisedManagerOptions): ServiceManager {
  const { rootDir } = opts;
  const clock = opts.clock ?? systemClock;

  async function isActive(unit: string): Promise<string> {
    const status = await readStatus(servicePaths(rootDir, unit).status);
    return status ? effectiveState(status) : "inactive";
  }

  async function start(unit: string): Promise<void> {
    await loadUnit(rootDir, unit); // a unit that cannot run here is refused before anything starts
    const paths = servicePaths(rootDir, unit);
    const before = await readStatus(paths.status);
    if (before && isAlive(before.supervisor)) {
      if (before.state === "active" || before.state === "activating") return;
      // Stopping, or finished and about to exit: let it end (as stop does), then start afresh.
      await endSupervisor(before, await loadUnit(rootDir, unit).catch(() => null), clock);
    }
    const [program, ...args] = opts.command();
    // One walk to the log's directory (made where missing, reached safely): rotated and opened there.
    const out = inServiceDir(paths.log, (at) => {
      rotateLog(at);
      return openLogSync(at, paths.log);
    });
    let child;
    try {
      child = spawn(program!, [...args, "supervise", "--unit", unit, "--root", rootDir], { detached: true, stdio: ["ignore", out, out] });
    } finally {
      closeSync(out);
    }
    let exited: string | null = null;
    child.on("exit", (code, signal) => (exited = signal ? `killed by ${signal}` : `exited with status ${code}`));
    child.on("error", (err) => (exited = err.message));
    child.unref();
    const deadline = clock.now() + START_TIMEOUT_MS;
    for (;;) {
      const now = await readStatus(paths.status).catch(() => null);
      if (now && now.supervisor.pid === child.pid) {
        // Started, as systemd's start job finishes: the main process ran (what it does next is observed),
        // or a oneshot finished, or a failed attempt is already waiting to be restarted.
        if (now.state === "active" || now.state === "inactive" || now.restarts > 0) return;
        if (now.state === "failed") throw new Error(`${unit} failed to start: ${now.result}${await tail(paths.log)}`);
      }
      if (exited) throw new Error(`${unit}: the supervisor ${exited} before the service started${await tail(paths.log)}`);
      if (clock.now() > deadline) throw new Error(`${unit} did not start within ${START_TIMEOUT_MS / 1000} s${await tail(paths.log)}`);
      await sleep(POLL_MS, { clock: clock });
    }
  }

  async function stop(unit: string): Promise<void> {
    const paths = servicePaths(rootDir, unit);
    const status = await readStatus(paths.status);
    if (!status) return;
    if (isAlive(status.supervisor)) await endSupervisor(status, await loadUnit(rootDir, unit).catch(() => null), clock);
    // A supervisor killed outright leaves its service behind: finish its work.
    const last = (await readStatus(paths.status)) ?? status;
    if (last.main && isAlive(last.main)) await killGroup(last.main, "SIGTERM", 10_000, false, clock);
    if (last.state !== "inactive" && last.state !== "failed") {
      writeStatusSync(paths.status, {
        ...last,
        main: null,
        state: "inactive",
        since: isoNow(clock),
        result: "stopped by the host after its supervisor was gone",
      } satisfies ServiceStatus);
    }
  }

  return {
    name: "mesh-host",
    controlsProcesses: true,
    isEnabled: (unit) => enablement(rootDir, unit),
    isActive,
    async act(verb, unit) {
      switch (verb) {
        case "enable":
          return enableUnit(rootDir, unit);
        case "disable":
          return disableUnit(rootDir, unit);
        case "start":
          return start(unit);
        case "stop":
          return stop(unit);
        case "restart":
          await stop(unit);
          return start(unit);
      }
    },
    // The supervisor reads the unit file each time it starts; there is no loaded copy to refresh.
    reload: async () => false,
  };
}

/** The state as it stands: only a supervisor that finished writes inactive or failed; any other state with it gone means it was killed. */
function effectiveState(status: ServiceStatus): ServiceStatus["state"] {
  if (isAlive(status.supervisor)) return status.state;
  return status.state === "inactive" || status.state === "failed" ? status.state : "failed";
}

export interface SupervisedService {
  unit: string;
  state: ServiceStatus["state"];
  since: string;
  /** The main process while it runs. */
  pid: number | null;
  restarts: number;
  result: string;
  log: string;
}

/** Every unit the host's own supervisor has run under this root, as `mesh-host status` shows them. */
export async function supervisedServices(rootDir: string): Promise<SupervisedService[]> {
  const dir = dirname(servicePaths(rootDir, "x.service").status);
  const files = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".service.json")).sort();
  const out: SupervisedService[] = [];
  for (const file of files) {
    const unit = file.slice(0, -".json".length);
    const paths = servicePaths(rootDir, unit);
    const status = await readStatus(paths.status).catch(() => null);
    if (!status) continue;
    const state = effectiveState(status);
    const running = state === "active" || state === "activating" || state === "deactivating";
    out.push({
      unit,
      state,
      since: status.since,
      pid: running && status.main && isAlive(status.main) ? status.main.pid : null,
      restarts: status.restarts,
      result: status.result,
      log: paths.log,
    });
  }
  return out;
}

/**
 * SIGTERM to a supervisor, which stops its service as the unit says (each ExecStop and then
 * the kill each get TimeoutStopSec), and wait for it to exit; SIGKILL past that (at most an hour).
 */
async function endSupervisor(status: ServiceStatus, spec: UnitSpec | null, clock: Clock): Promise<void> {
  const stopMs = spec?.timeoutStopMs ?? 90_000;
  const grace = Number.isFinite(stopMs) ? ((spec?.execStop.length ?? 0) + 1) * stopMs + 5_000 : 3_600_000;
  signal(status.supervisor.pid, "SIGTERM");
  const deadline = clock.now() + Math.min(grace, 3_600_000);
  while (isAlive(status.supervisor) && clock.now() < deadline) await sleep(POLL_MS, { clock: clock });
  if (isAlive(status.supervisor)) signal(status.supervisor.pid, "SIGKILL");
  while (isAlive(status.supervisor) && clock.now() < deadline + 10_000) await sleep(POLL_MS, { clock: clock });
}

/** A process that is gone already (and reaped by whatever PID 1 is) is not an error. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

async function tail(log: string): Promise<string> {
  const text = await fs.readFile(log, { encoding: "utf8", flag: constants.O_RDONLY | constants.O_NOFOLLOW }).catch(() => "");
  const lines = text.trim().split("\n").filter(Boolean).slice(-5);
  return lines.length ? `; last output: ${lines.join(" / ").slice(-1000)}` : "";
}
