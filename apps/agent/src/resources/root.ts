// The --root every provider works under. A path is resolved inside it and
// refused when a symlink on the way leads outside it.
import { promises as fs } from "node:fs";
import { basename, dirname, join } from "node:path";

export class RootEscapeError extends Error {
  constructor(path: string) {
    super(`${path} resolves outside the root through a symlink; refused`);
    this.name = "RootEscapeError";
  }
}

export class Root {
  private real: string | null = null;
  constructor(readonly dir: string) {}

  private async realRoot(): Promise<string> {
    this.real ??= await fs.realpath(this.dir);
    return this.real;
  }

  /**
   * realpath, shared through `cache` by the paths of one reconcile (a thousand files in
   * twenty directories resolve twenty directories). Only successes are kept: a directory
   * made later in the reconcile is then found.
   */
  private realpath(dir: string, cache?: Map<string, Promise<string>>): Promise<string> {
    if (!cache) return fs.realpath(dir);
    let p = cache.get(dir);
    if (!p) {
      p = fs.realpath(dir);
      cache.set(dir, p);
      p.catch(() => cache.delete(dir));
    }
    return p;
  }

  private inside(real: string, p: string): boolean {
    if (real === "/") return true;
    return p === real || p.startsWith(real + "/");
  }

  /**
   * The host path for a declared absolute path. Every existing ancestor is
   * resolved through its symlinks and must stay inside the root; the final
   * component is not followed (providers lstat it and never write through it).
   */
  async resolve(path: string, realpaths?: Map<string, Promise<string>>): Promise<string> {
    const real = await this.realRoot();
    const wanted = join(real, path);
    let ancestor = dirname(wanted);
    const rest: string[] = [basename(wanted)];
    for (;;) {
      try {
        const resolved = await this.realpath(ancestor, realpaths);
        if (!this.inside(real, resolved)) throw new RootEscapeError(path);
        return join(resolved, ...rest);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if ((code === "ENOENT" || code === "ENOTDIR") && this.inside(real, dirname(ancestor)) && ancestor !== real) {
          // Something there that realpath cannot follow is a dangling symlink: where it
          // leads may appear later, outside the root, so refuse rather than walk past it.
          if (await exists(ancestor)) throw new RootEscapeError(path);
          rest.unshift(basename(ancestor));
          ancestor = dirname(ancestor);
          continue;
        }
        throw err;
      }
    }
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}
