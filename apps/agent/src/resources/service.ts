// The `service` resource: a systemd unit's file under /etc/systemd/system, whether it is
// enabled and whether it runs, driven through a ServiceManager (systemd, or the host's own supervisor).
// status: ready for wiring
import { createHash } from "node:crypto";
import { constants as fsConstants, promises as fs } from "node:fs";
import { dirname, join } from "node:path";
import type { ServiceResource } from "@mesh/protocol";
import { randomTempBeside, replaceFile, replaceWithSymlink, syncDir } from "../fs/atomic-file";
import { inDir, openOwnDir, SafePaths } from "./safe-path";
import type { ServiceManager, ServiceVerb } from "./service-manager";

export interface ServiceContext {
  /** "/" for the machine, or a sandbox root. */
  root: string;
  /** systemd where it is PID 1, otherwise the host's own supervisor. */
  manager: ServiceManager;
  /** Where unit files go; ROOT/etc/systemd/system unless a test points it elsewhere to check the real-root argv. */
  unitDir?: string;
}

export interface ObservedService {
  unit: string;
  /** sha256 of ROOT/etc/systemd/system/<unit> ("symlink:<target>" hashed for a link, e.g. a mask), or null when there is none. */
  unitFileSha256: string | null;
  /** What `systemctl is-enabled` says: enabled, disabled, static, masked, not-found, ... */
  enabled: string;
  /** What `systemctl is-active` says: active, inactive, failed, activating, ...; "unknown" under a sandbox root. */
  active: string;
}

/** The unit file as it stood in /etc/systemd/system before the host changed anything. */
export type UnitFile = { kind: "file"; content: string } | { kind: "symlink"; target: string } | null;

export interface ServiceSnapshot {
  unit: string;
  unitFile: UnitFile;
  enabled: string;
  active: string;
}

export interface ServiceChange {
  /** What ran, in order: "wrote unit file", "daemon-reload", "enable", "start", ... */
  actions: string[];
  observed: ObservedService;
}

export interface ServiceRestore extends ServiceChange {
  outcome: "unchanged" | "restored" | "approximate";
  detail: string;
}

/** Invariant 5: the installation owns the host's own unit, never the host. */
export const HOST_UNIT = "mesh-host.service";

/** Thrown before anything is changed when a service operation cannot work here; reported per resource. */
export class ServiceUnsupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServiceUnsupportedError";
  }
}

/** Whether systemd runs as PID 1; a container or a chroot usually has something else there. */
export async function systemdIsPid1(procDir = "/proc"): Promise<boolean> {
  try {
    return (await fs.readFile(join(procDir, "1/comm"), "utf8")).trim() === "systemd";
  } catch {
    return false;
  }
}

export async function observeService(ctx: ServiceContext, unit: string): Promise<ObservedService> {
  const unitFile = await readUnitFile(ctx, unit);
  const enabled = await ctx.manager.isEnabled(unit);
  const active = await ctx.manager.isActive(unit);
  return { unit, unitFileSha256: unitFileSha256(unitFile), enabled, active };
}

export function serviceSatisfies(resource: ServiceResource, observed: ObservedService): boolean {
  return describeServiceDrift(resource, observed) === null;
}

/** The observed state as a digest input, limited to what the resource declares. */
export function serviceState(observed: ObservedService, declared: ServiceResource): Record<string, string | boolean | null> {
  const state: Record<string, string | boolean | null> = { unit: observed.unit };
  if (declared.content !== undefined) state.unitFileSha256 = observed.unitFileSha256;
  if (declared.enabled !== undefined) state.enabled = isEnabled(observed.enabled);
  if (declared.state !== undefined) state.running = isRunning(observed.active);
  return state;
}

/** The declared state in the shape of `serviceState`, so equal digests mean no drift. */
export function declaredServiceState(resource: ServiceResource): Record<string, string | boolean | null> {
  const state: Record<string, string | boolean | null> = { unit: resource.unit };
  if (resource.content !== undefined) state.unitFileSha256 = sha256Hex(resource.content);
  if (resource.enabled !== undefined) state.enabled = resource.enabled;
  if (resource.state !== undefined) state.running = resource.state === "running";
  return state;
}

/** One line on how the unit differs from its declaration, or null when it does not. */
export function describeServiceDrift(resource: ServiceResource, observed: ObservedService): string | null {
  const parts: string[] = [];
  if (resource.content !== undefined && observed.unitFileSha256 !== sha256Hex(resource.content)) {
    parts.push(observed.unitFileSha256 === null ? "unit file missing" : "unit file content differs");
  }
  if (resource.enabled !== undefined && isEnabled(observed.enabled) !== resource.enabled) {
    parts.push(`${observed.enabled}, declared ${resource.enabled ? "enabled" : "disabled"}`);
  }
  if (resource.state !== undefined && isRunning(observed.active) !== (resource.state === "running")) {
    parts.push(`${observed.active}, declared ${resource.state}`);
  }
  return parts.length ? parts.join("; ") : null;
}

/** Bring the unit to its declaration, then observe again and throw unless it got there. */
export async function applyService(ctx: ServiceContext, resource: ServiceResource, observed: ObservedService): Promise<ServiceChange> {
  refuseHostUnit(resource.unit);
  if (resource.state !== undefined) requireProcessControl(ctx, resource.unit);
  const actions: string[] = [];
  const { unit } = resource;

  const contentChanged = resource.content !== undefined && observed.unitFileSha256 !== sha256Hex(resource.content);
  if (contentChanged) {
    await writeUnitFile(ctx, unit, { kind: "file", content: resource.content! });
    actions.push("wrote unit file");
    await daemonReload(ctx, actions);
  }
  if (resource.enabled === true && !isEnabled(observed.enabled)) await act(ctx, "enable", unit, actions);
  if (resource.enabled === false && isEnabled(observed.enabled)) await act(ctx, "disable", unit, actions);
  if (resource.state === "running") {
    // A running service keeps its old definition until restarted; a new unit file is meant to take effect.
    if (!isRunning(observed.active)) await act(ctx, "start", unit, actions);
    else if (contentChanged) await act(ctx, "restart", unit, actions);
  }
  if (resource.state === "stopped" && isRunning(observed.active)) await act(ctx, "stop", unit, actions);

  const after = await observeService(ctx, unit);
  const drift = describeServiceDrift(resource, after);
  if (drift) throw new Error(`service ${unit} is not as declared after ${actions.join(", ") || "nothing ran"}: ${drift}`);
  return { actions, observed: after };
}

/**
 * Take away a unit the host created (it was not there before): stop, disable, and delete
 * its unit file when the host wrote one. Anything that existed before goes through restoreService.
 */
export async function removeService(ctx: ServiceContext, resource: ServiceResource): Promise<ServiceChange> {
  refuseHostUnit(resource.unit);
  const { unit } = resource;
  const actions: string[] = [];
  const now = await observeService(ctx, unit);
  if (ctx.manager.controlsProcesses && isRunning(now.active)) await act(ctx, "stop", unit, actions);
  // Disable while the unit file is still there: the manager finds the links to remove through it.
  if (isEnabled(now.enabled)) await act(ctx, "disable", unit, actions);
  if (resource.content !== undefined && now.unitFileSha256 !== null) {
    await writeUnitFile(ctx, unit, null);
    actions.push("deleted unit file");
    await daemonReload(ctx, actions);
  }
  return { actions, observed: await observeService(ctx, unit) };
}

/** Record the unit as it stands before the host first changes it (adoption). */
export async function snapshotService(ctx: ServiceContext, unit: string): Promise<ServiceSnapshot> {
  const observed = await observeService(ctx, unit);
  return { unit, unitFile: await readUnitFile(ctx, unit), enabled: observed.enabled, active: observed.active };
}

/** Put an adopted unit back as the snapshot found it: its unit file, enablement and running state. */
export async function restoreService(ctx: ServiceContext, snapshot: ServiceSnapshot): Promise<ServiceRestore> {
  const { unit } = snapshot;
  refuseHostUnit(unit);
  const actions: string[] = [];
  const now = await observeService(ctx, unit);
  const wasRunning = isRunning(snapshot.active);
  const wasEnabled = isEnabled(snapshot.enabled);
  const fileChanged = now.unitFileSha256 !== unitFileSha256(snapshot.unitFile);
  const manager = ctx.manager.controlsProcesses;

  if (manager && !wasRunning && isRunning(now.active)) await act(ctx, "stop", unit, actions);
  if (!wasEnabled && isEnabled(now.enabled)) await act(ctx, "disable", unit, actions);
  if (fileChanged) {
    await writeUnitFile(ctx, unit, snapshot.unitFile);
    actions.push(snapshot.unitFile === null ? "deleted unit file" : "restored unit file");
    await daemonReload(ctx, actions);
  }
  if (wasEnabled && !isEnabled(now.enabled)) await act(ctx, "enable", unit, actions);
  if (manager && wasRunning) {
    if (!isRunning(now.active)) await act(ctx, "start", unit, actions);
    else if (fileChanged) await act(ctx, "restart", unit, actions);
  }

  const after = await observeService(ctx, unit);
  const differences: string[] = [];
  if (after.unitFileSha256 !== unitFileSha256(snapshot.unitFile)) differences.push("unit file differs");
  if (after.enabled !== snapshot.enabled) differences.push(`${after.enabled}, was ${snapshot.enabled}`);
  if (manager && after.active !== snapshot.active) differences.push(`${after.active}, was ${snapshot.active}`);
  if (differences.length) return { outcome: "approximate", detail: `${unit}: ${differences.join("; ")}`, actions, observed: after };
  return { outcome: actions.length ? "restored" : "unchanged", detail: `${unit} is as it was before the host adopted it`, actions, observed: after };
}

/** systemd's start and stop act on the running machine, which a sandbox root promises not to touch. */
function requireProcessControl(ctx: ServiceContext, unit: string): void {
  if (!ctx.manager.controlsProcesses)
    throw new ServiceUnsupportedError(
      `service ${unit}: a running or stopped state needs --root /; under a sandbox root only the unit file and enablement are managed`,
    );
}

function refuseHostUnit(unit: string): void {
  if (unit === HOST_UNIT) throw new Error(`${HOST_UNIT} belongs to the host's installation; the host never edits, enables, starts or stops its own unit`);
}

async function act(ctx: ServiceContext, verb: ServiceVerb, unit: string, actions: string[]): Promise<void> {
  await ctx.manager.act(verb, unit);
  actions.push(verb);
}

async function daemonReload(ctx: ServiceContext, actions: string[]): Promise<void> {
  if (await ctx.manager.reload()) actions.push("daemon-reload");
}

function isEnabled(state: string): boolean {
  return state === "enabled" || state === "enabled-runtime";
}

function isRunning(active: string): boolean {
  return active === "active" || active === "activating" || active === "reloading";
}

/** Where the host writes unit files, under the root. */
const UNIT_DIR = "/etc/systemd/system";

/**
 * The directory of unit files, reached from the root without following a symlink anyone but
 * root could have planted (safe-path.ts), and made where missing when `make`; null when it is not there.
 * `at(unit)` names a unit file in it through its descriptor, until `close`.
 */
function unitDirectory(ctx: ServiceContext, make: boolean): { at(name: string): string; close(): void } | null {
  if (ctx.unitDir) {
    const dir = ctx.unitDir;
    return { at: (name) => join(dir, name), close: () => undefined };
  }
  if (make) return openOwnDir(ctx.root, UNIT_DIR, 0o755);
  const paths = new SafePaths(ctx.root);
  try {
    const { dir } = paths.parent(`${UNIT_DIR}/.`);
    return { at: (name) => inDir(dir.fd, name), close: () => paths.close() };
  } catch (err) {
    paths.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
}

async function readUnitFile(ctx: ServiceContext, unit: string): Promise<UnitFile> {
  const dir = unitDirectory(ctx, false);
  if (!dir) return null;
  try {
    return await readUnitFileAt(dir.at(unit));
  } finally {
    dir.close();
  }
}

/** A unit file as it stands at a host path: its text, the link it is (a mask links to /dev/null), or null. */
export async function readUnitFileAt(path: string): Promise<UnitFile> {
  try {
    // Opened once without following a link, and read from that handle: what was looked at is what is read.
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ELOOP") return { kind: "symlink", target: await fs.readlink(path) };
      throw err;
    }
    try {
      if (!(await handle.stat()).isFile()) throw new Error(`${path} is not a regular file`);
      return { kind: "file", content: await handle.readFile("utf8") };
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
}

function unitFileSha256(unitFile: UnitFile): string | null {
  if (unitFile === null) return null;
  return sha256Hex(unitFile.kind === "file" ? unitFile.content : `symlink:${unitFile.target}`);
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Temp file (or link), fsync, rename, fsync the directory: systemd never reads half a unit. null deletes. */
async function writeUnitFile(ctx: ServiceContext, unit: string, unitFile: UnitFile): Promise<void> {
  const unitDir = unitDirectory(ctx, unitFile !== null);
  if (!unitDir) return; // nothing to delete where there is no directory
  try {
    await writeUnitFileAt(unitDir.at(unit), unitFile);
  } finally {
    unitDir.close();
  }
}

async function writeUnitFileAt(path: string, unitFile: UnitFile): Promise<void> {
  const dir = dirname(path);
  if (unitFile === null) {
    await fs.rm(path, { force: true });
    await syncDir(dir);
    return;
  }
  await fs.mkdir(dir, { recursive: true });
  const temp = randomTempBeside(path, "mesh");
  if (unitFile.kind === "symlink") await replaceWithSymlink(path, unitFile.target, { temp });
  else await replaceFile(path, unitFile.content, { mode: 0o644, temp });
}
