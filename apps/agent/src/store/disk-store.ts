// The disk store: one file per key in the state dir. Every write is temp file,
// fsync, rename, fsync of the directory, so a crash leaves the old or the new file.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { dirname, join } from "node:path";
import { checkKey, type Store } from "./store";

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
    const temp = join(folder, `.${key.slice(key.lastIndexOf("/") + 1)}.tmp-${randomBytes(6).toString("hex")}`);
    const mode = options?.mode ?? 0o600;
    const fh = await fs.open(temp, "wx", mode);
    try {
      await fh.writeFile(data);
      // The umask may have narrowed the mode at open; say it exactly.
      await fh.chmod(mode);
      await fh.sync();
    } catch (err) {
      await fh.close();
      await fs.rm(temp, { force: true });
      throw err;
    }
    await fh.close();
    try {
      await fs.rename(temp, target);
    } catch (err) {
      await fs.rm(temp, { force: true });
      throw err;
    }
    await this.syncDir(folder);
  }

  /** A folder under the state dir, made durably: a rename inside it must not outlive the folder itself. */
  private async makeFolder(folder: string): Promise<void> {
    try {
      await fs.mkdir(folder, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
      throw err;
    }
    await this.syncDir();
  }

  /**
   * Remove temp files a killed writer left behind. Only the holder of the state
   * dir's lock may call this: another writer's temp file would vanish under it.
   */
  async removeLeftovers(): Promise<void> {
    for (const folder of [this.dir, join(this.dir, "originals")]) {
      let names: string[];
      try {
        names = await fs.readdir(folder);
      } catch {
        continue;
      }
      for (const name of names) if (/^\..*\.tmp-[0-9a-f]{12}$/.test(name)) await fs.rm(join(folder, name), { force: true });
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
    await this.syncDir();
  }

  async remove(key: string): Promise<void> {
    checkKey(key);
    const target = join(this.dir, key);
    await fs.rm(target, { force: true });
    await this.syncDir(dirname(target));
  }

  /** A rename is durable only once its directory is synced; read-only open is enough for fsync. */
  private async syncDir(dir = this.dir): Promise<void> {
    const dh = await fs.open(dir, "r");
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }
}
