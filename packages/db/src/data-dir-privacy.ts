// The embedded database's directory is private: 0700 directories and 0600 files,
// fixed at every start (PGlite writes its files 0666 whatever the umask), or a clear refusal.
import fs from "node:fs";
import path from "node:path";

export class DataDirOpenError extends Error {
  constructor(
    readonly dir: string,
    detail: string,
  ) {
    super(
      `the data directory ${dir} is open to other users and cannot be made private (${detail}); fix it as its owner (chmod -R go-rwx ${dir}) or set MESH_DATA_DIR to a directory of this user`,
    );
    this.name = "DataDirOpenError";
  }
}

const uid = () => process.getuid?.() ?? 0;

function describe(p: string, stat: fs.Stats): string {
  return `${p} is ${(stat.mode & 0o777).toString(8).padStart(4, "0")} and belongs to uid ${stat.uid}`;
}

/** Makes `target` 0700 (directory) or 0600 (file); throws DataDirOpenError when it is open and not ours to fix. */
function makePrivate(root: string, target: string, stat: fs.Stats): boolean {
  const wanted = stat.isDirectory() ? 0o700 : 0o600;
  if ((stat.mode & 0o077) === 0) return false;
  if (stat.uid !== uid() && uid() !== 0) throw new DataDirOpenError(root, describe(target, stat));
  try {
    fs.chmodSync(target, (stat.mode & 0o700) | (wanted & 0o700));
  } catch (err) {
    throw new DataDirOpenError(root, `${describe(target, stat)}: ${(err as NodeJS.ErrnoException).code}`);
  }
  return true;
}

/** Creates the directory 0700 if missing, then makes it and everything in it private. Returns how many modes it fixed. */
export function makeDataDirPrivate(dir: string): number {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const root = fs.realpathSync(dir);
  let fixed = makePrivate(root, root, fs.statSync(root)) ? 1 : 0;
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      const stat = fs.lstatSync(p);
      // A symlink's own mode means nothing, and following one would leave the directory.
      if (stat.isSymbolicLink()) continue;
      if (makePrivate(root, p, stat)) fixed++;
      if (stat.isDirectory()) walk(p);
    }
  };
  walk(root);
  return fixed;
}
