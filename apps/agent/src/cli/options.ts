// The flags every command shares (--state-dir, --root, --interval) with their
// environment fallbacks, checked once so that a bad one exits 2 naming itself.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { HostError } from "../host-error";
import { DEFAULT_STATE_DIR } from "../state-dir/keys";

export interface CommonOptions {
  stateDir: string;
  root: string;
  intervalMs: number;
}

export function commonOptions(values: { "state-dir"?: string; root?: string; interval?: string }, env: NodeJS.ProcessEnv = process.env): CommonOptions {
  const stateDir = values["state-dir"] ?? env.MESH_STATE_DIR ?? DEFAULT_STATE_DIR;
  if (!stateDir) throw new HostError("usage", "--state-dir: must not be empty");
  const root = values.root ?? env.MESH_ROOT ?? "/";
  let rootIsDir = false;
  try {
    rootIsDir = statSync(root).isDirectory();
  } catch {
    rootIsDir = false;
  }
  if (!rootIsDir) throw new HostError("usage", `--root ${root}: not an existing directory`);
  const rawInterval = values.interval ?? "300";
  const seconds = Number(rawInterval);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) {
    throw new HostError("usage", `--interval ${rawInterval}: must be a number of seconds between 0 and 86400`);
  }
  return { stateDir: resolve(stateDir), root: resolve(root), intervalMs: Math.max(10, Math.round(seconds * 1000)) };
}
