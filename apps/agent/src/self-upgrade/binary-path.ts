// Where the running host lives on disk: the executable itself when it is Node's
// single executable application, the bundle file when run as `node mesh-host.js`.
import { realpathSync } from "node:fs";
import { isSea } from "node:sea";

export function runningAsSea(): boolean {
  try {
    return isSea();
  } catch {
    return false;
  }
}

export function runningBinaryPath(): string {
  const p = runningAsSea() ? process.execPath : (process.argv[1] ?? process.execPath);
  // The path the supervisor starts: a symlink to it (/usr/bin -> /opt) would be replaced, not what it names.
  // Unresolvable (the file was removed under a running host): the upgrade's own stat reports it.
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The argv that runs this host again (for `mesh-host supervise`): the executable, or node and the bundle. */
export function hostCommand(): string[] {
  if (runningAsSea()) return [process.execPath];
  const script = process.argv[1] ?? "";
  if (!/mesh-host(\.[cm]?js)?$/.test(script)) throw new Error(`cannot tell how to run mesh-host again (running ${script || process.execPath})`);
  return [process.execPath, runningBinaryPath()];
}
