// Where and as whom a unit's commands run, read again at every start as systemd does: the
// user's entry, EnvironmentFile= (which wins over Environment=) and WorkingDirectory=, under the root.
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { reasonOf } from "../host-error";
import { Accounts } from "../resources/accounts";
import { parseEnvironmentFile } from "./environment-file";
import type { UnitSpec } from "./unit-file";
import type { Launch } from "./unit-processes";

/** systemd's fixed PATH for system services. */
const SERVICE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The process's working directory, environment and identity, as the unit gives them. */
export async function launchContext(rootDir: string, spec: UnitSpec): Promise<Launch> {
  const accounts = new Accounts(rootDir);
  const user = spec.user ? await accounts.user(spec.user) : null;
  const gid = spec.group ? await accounts.gid(spec.group) : user?.gid;
  const env: Record<string, string> = {
    PATH: SERVICE_PATH,
    HOME: user?.home ?? "/root",
    USER: spec.user ?? "root",
    LOGNAME: spec.user ?? "root",
    ...spec.environment,
  };
  // EnvironmentFile= wins over Environment=, as in systemd.
  for (const file of spec.environmentFiles) {
    let text: string;
    try {
      text = await fs.readFile(join(rootDir, file.path), "utf8");
    } catch (err) {
      if (file.optional && (err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new Error(`EnvironmentFile=${file.path}: ${reasonOf(err)}`);
    }
    Object.assign(env, parseEnvironmentFile(text));
  }
  let cwd = rootDir;
  if (spec.workingDirectory) {
    const dir = join(rootDir, spec.workingDirectory.path);
    const ok = await fs.stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (ok) cwd = dir;
    else if (!spec.workingDirectory.optional) throw new Error(`WorkingDirectory=${spec.workingDirectory.path}: not a directory`);
  }
  return { cwd, env, ...(user ? { uid: user.uid } : {}), ...(gid !== undefined ? { gid } : {}) };
}
