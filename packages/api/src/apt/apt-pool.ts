// Which .debs the apt repository holds: those `npm run package` left in the artifacts directory,
// and any an operator copied into MESH_DATA_DIR/apt/pool (that one wins a name both have).
import fs from "node:fs";
import path from "node:path";

/** Debian's file name, `<package>_<version>_<arch>.deb` (`dpkg-name` renames any .deb to it); the epoch is left out. */
export const DEB_FILE_NAME = /^([a-z0-9][a-z0-9+.-]{0,99})_([A-Za-z0-9.+~-]{1,100})_([a-z0-9-]{1,30})\.deb$/;

export interface PoolDeb {
  /** The file name, also its name in the repository's pool. */
  name: string;
  /** The file itself. */
  file: string;
  package: string;
  version: string;
  arch: string;
  /** Size, mtime and inode: a changed file changes this. */
  stamp: string;
}

export interface PoolListing {
  debs: PoolDeb[];
  /** .deb files skipped for their names (rename them with `dpkg-name`). */
  skipped: string[];
  /** One string for the whole set: equal listings mean an equal repository. */
  fingerprint: string;
}

/** Lists the .debs of `dirs`, later directories winning a name; a missing directory holds none. */
export function listPool(dirs: string[]): PoolListing {
  const byName = new Map<string, PoolDeb>();
  const skipped: string[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.endsWith(".deb")) continue;
      const m = DEB_FILE_NAME.exec(name);
      if (!m) {
        skipped.push(path.join(dir, name));
        continue;
      }
      const file = path.join(dir, name);
      let stat: fs.Stats;
      try {
        stat = fs.statSync(file);
      } catch {
        continue;
      }
      if (!stat.isFile()) continue;
      byName.set(name, { name, file, package: m[1]!, version: m[2]!, arch: m[3]!, stamp: `${stat.size}:${stat.mtimeMs}:${stat.ino}` });
    }
  }
  const debs = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const fingerprint = debs.map((d) => `${d.file}\0${d.stamp}`).join("\n");
  return { debs, skipped, fingerprint };
}
