// `mesh-host supervise --unit U`: what systemd would do for one unit, where systemd is not
// PID 1. Takes over from a run that was killed outright, loads the unit, keeps its log in bounds,
// and hands the run to UnitRun (the state machine: start sequence, restarts, stop). Started detached by the host.
import { writeSync } from "node:fs";
import { systemClock } from "../clock";
import { reasonOf } from "../host-error";
import { launchContext } from "./launch-context";
import { killGroup, rotateLog } from "./process-group";
import { inServiceDir, isAlive, processRef, readStatus, servicePaths, writeStatusSync, type ServiceStatus } from "./service-status";
import { loadUnit } from "./unit-location";
import { realProcesses } from "./unit-processes";
import { UnitRun } from "./unit-run";

const LOG_CHECK_MS = 30_000;

export async function superviseCommand(opts: { rootDir: string; unit: string }): Promise<number> {
  const { rootDir, unit } = opts;
  const clock = systemClock;
  const paths = servicePaths(rootDir, unit);
  const me = processRef(process.pid)!;
  const now = () => new Date(clock.now()).toISOString();
  const say = (line: string) => writeSync(1, `${now()} mesh-host supervise ${unit}: ${line}\n`);
  // A stop can come before the run exists: remembered here, handed to it once it does.
  let stopFor: string | null = null;
  let onStop: (signal: string) => void = (signal) => void (stopFor = signal);
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
    await killGroup(previous.main, "SIGTERM", 10_000, false, clock);
  }

  const status: ServiceStatus = { unit, supervisor: me, main: null, state: "activating", since: now(), restarts: 0, result: "starting" };
  const writeStatus = (s: ServiceStatus) => writeStatusSync(paths.status, s);
  writeStatus(status);

  let spec;
  try {
    spec = await loadUnit(rootDir, unit);
  } catch (err) {
    say(reasonOf(err));
    writeStatus({ ...status, state: "failed", since: now(), result: reasonOf(err) });
    return 1;
  }
  if (spec.notEnforced.length) say(`not enforced without systemd: ${spec.notEnforced.join(", ")}`);
  if (spec.ignored.length) say(`unknown directives ignored: ${spec.ignored.join(", ")}`);

  let logCheck: unknown = null;
  const checkLog = () => {
    logCheck = clock.setTimeout(() => {
      try {
        inServiceDir(paths.log, rotateLog);
      } catch {
        /* the log directory is gone or unsafe: the next check tries again */
      }
      checkLog();
    }, LOG_CHECK_MS);
  };
  checkLog();
  const unitSpec = spec;
  const run = new UnitRun({ spec, status, writeStatus, say, prepare: () => launchContext(rootDir, unitSpec), processes: realProcesses, clock });
  onStop = (signal) => run.stop(signal);
  if (stopFor) run.stop(stopFor);
  try {
    return await run.run();
  } finally {
    clock.clearTimeout(logCheck);
  }
}
