// Where the running host lives on disk: the executable itself when it is Node's
// single executable application, the bundle file when run as `node mesh-host.js`.
import { realpathSync } from "node:fs";
import { isSea } from "node:sea";

export function runningBinaryPath(): string {
  let sea = false;
  try {
    sea = isSea();
  } catch {
    sea = false;
  }
  const p = sea ? process.execPath : process.argv[1] ?? process.execPath;
  // The path the supervisor starts: a symlink to it (/usr/bin -> /opt) would be replaced, not what it names.
  // Unresolvable (the file was removed under a running host): the upgrade's own stat reports it.
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
