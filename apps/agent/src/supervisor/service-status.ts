// Where the host's own supervisor keeps a service's state: ROOT/run/mesh-host/services/<unit>.json,
// written atomically by the one supervisor process, and read by the host to answer is-active.
import { readFileSync } from "node:fs";
import { promises as fs } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { z } from "zod";
import { replaceFileSync } from "../fs/atomic-file";
import { parseJson } from "../store/read-json";
import { openOwnDir } from "../resources/safe-path";

/** A process as the kernel knows it: a pid alone can be reused, a pid with its start time cannot. */
export const ProcessRef = z.strictObject({ pid: z.number().int().positive(), startTime: z.string().max(32) });
export type ProcessRef = z.infer<typeof ProcessRef>;

export const SERVICE_STATES = ["activating", "active", "deactivating", "inactive", "failed"] as const;

export const ServiceStatus = z.strictObject({
  unit: z.string().max(256),
  /** The `mesh-host supervise` process that owns the service while it runs. */
  supervisor: ProcessRef,
  /** The service's main process (also its process group), while there is one. */
  main: ProcessRef.nullable(),
  state: z.enum(SERVICE_STATES),
  since: z.string().max(64),
  restarts: z.number().int().min(0),
  /** One line on the last thing that happened: "started pid 12", "exited with status 3", ... */
  result: z.string().max(2000),
});
export type ServiceStatus = z.infer<typeof ServiceStatus>;

export interface ServicePaths {
  status: string;
  log: string;
}

/** The status file and the log of a unit under a root. */
export function servicePaths(rootDir: string, unit: string): ServicePaths {
  return {
    status: join(rootDir, "run/mesh-host/services", `${unit}.json`),
    log: join(rootDir, "var/log/mesh-host", `${unit}.log`),
  };
}

/**
 * `act` on a status file or log through its directory, made where missing and reached from the
 * root without following a symlink anyone but root could have planted (resources/safe-path.ts):
 * `at` names the file through the directory's descriptor.
 */
export function inServiceDir<T>(file: string, act: (at: string) => T): T {
  const dir = dirname(file);
  // ROOT/run/mesh-host/services and ROOT/var/log/mesh-host: three levels below the root.
  const rootDir = dirname(dirname(dirname(dir)));
  const own = openOwnDir(rootDir, `/${relative(rootDir, dir)}`, 0o755);
  try {
    return act(own.at(basename(file)));
  } finally {
    own.close();
  }
}

/** The status on disk, or null when there is none (never started, or /run was cleared by a reboot). */
export async function readStatus(path: string): Promise<ServiceStatus | null> {
  let text: string;
  try {
    text = await fs.readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  const status = parseJson(text, ServiceStatus);
  if (!status) throw new Error(`${path}: not a service status file; remove it to start over`);
  return status;
}

/** Temp file, fsync, rename, fsync of the directory: synchronous, because the supervisor writes it from signal handlers too. */
export function writeStatusSync(file: string, status: ServiceStatus): void {
  inServiceDir(file, (path) => replaceFileSync(path, JSON.stringify(status) + "\n", { mode: 0o644 }));
}

/** Field 22 of /proc/PID/stat (clock ticks after boot), or null when there is no such process. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state); a zombie has exited and only waits to be reaped.
    if (fields[0] === "Z") return null;
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

export function processRef(pid: number): ProcessRef | null {
  const startTime = processStartTime(pid);
  return startTime === null ? null : { pid, startTime };
}

/** Whether this exact process (not a later one that got its pid) still runs. */
export function isAlive(ref: ProcessRef | null | undefined): boolean {
  return !!ref && processStartTime(ref.pid) === ref.startTime;
}
