// The disk store: one file per key in the state dir. Every write is temp file,
// fsync, rename, fsync of the directory, so a crash leaves the old or the new file.
import { promises as fs } from "node:fs";
import { dirname, join } from "node:path";
import { isRandomTemp, replaceFile, syncDir } from "../fs/atomic-file";
import { checkKey, type Store } from "./store";
import { STATE_DIR_NAMES } from "../state-dir/keys";

export class DiskStore implements Store {
  constructor(readonly dir: string) {}

  /** Make the state dir (0700: it holds the node's private key). */
  async init(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  async read(key: string): Promise<Buffer | null> {
    checkKey(key);
    try {
      return await fs.readFile(join(this.dir, key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async write(key: string, data: string | Buffer, options?: { mode?: number }): Promise<void> {
    checkKey(key);
    const target = join(this.dir, key);
    const folder = dirname(target);
    if (folder !== this.dir) await this.makeFolder(folder);
    await replaceFile(target, data, { mode: options?.mode ?? 0o600 });
  }

  /** A folder under the state dir, made durably: a rename inside it must not outlive the folder itself. */
  private async makeFolder(folder: string): Promise<void> {
    try {
      await fs.mkdir(folder, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
      throw err;
    }
    await syncDir(this.dir);
  }

  /**
   * Remove temp files a killed writer left behind. Only the holder of the state
   * dir's lock may call this: another writer's temp file would vanish under it.
   */
  async removeLeftovers(): Promise<void> {
    for (const folder of [this.dir, join(this.dir, STATE_DIR_NAMES.originals)]) {
      let names: string[];
      try {
        names = await fs.readdir(folder);
      } catch {
        continue;
      }
      for (const name of names) if (isRandomTemp(name)) await fs.rm(join(folder, name), { force: true });
    }
  }

  async setAside(key: string, aside: string): Promise<void> {
    checkKey(key);
    checkKey(aside);
    try {
      await fs.rename(join(this.dir, key), join(this.dir, aside));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    await syncDir(this.dir);
  }

  async remove(key: string): Promise<void> {
    checkKey(key);
    const target = join(this.dir, key);
    await fs.rm(target, { force: true });
    await syncDir(dirname(target));
  }
}
