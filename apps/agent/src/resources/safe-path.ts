// Declared paths reached the way a root daemon must: component by component from --root
// through directory descriptors, refusing symlinks a non-root user could have planted (decision 0010).
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { RootEscapeError } from "./root";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** As the kernel's own limit on symlinks followed in one lookup. */
const MAX_LINKS = 40;

/**
 * `name` inside the directory open as `dirFd`. Linux resolves /proc/self/fd/N through the
 * descriptor, not by name, so this path behaves as openat(N, name): only `name` is looked up.
 */
export function inDir(dirFd: number, name: string): string {
  return `/proc/self/fd/${dirFd}/${name}`;
}

export class UnsafePathError extends Error {
  constructor(path: string, link: string, dir: Stats) {
    const who = dir.uid !== 0 ? `owned by uid ${dir.uid}` : `writable by ${dir.mode & 0o002 ? "every user" : `group ${dir.gid}`}`;
    super(`${path}: ${link} is a symlink in a directory ${who}; not followed (an unsafe path transition: a non-root user could have planted it)`);
    this.name = "UnsafePathError";
  }
}

/** An ancestor that does not exist (yet): ENOENT, so that observing says absent and removing says gone. */
export class MissingParentError extends Error {
  readonly code = "ENOENT";
  constructor(path: string) {
    super(`parent directory of ${path} does not exist (declare it as a directory resource)`);
    this.name = "MissingParentError";
  }
}

/** Whether only root can change a directory's entries: then a symlink in it was put there by root. */
export function rootOnly(dir: Stats): boolean {
  return dir.uid === 0 && (dir.mode & 0o002) === 0 && ((dir.mode & 0o020) === 0 || dir.gid === 0);
}

interface OpenDir {
  fd: number;
  /** The directory's path under the root with every symlink resolved ("" is the root). */
  real: string;
}

/**
 * The opened directories of one reconcile. Only successes are cached (a directory made later
 * in the reconcile is then found); descriptors stay open until `close`, so that a
 * /proc/self/fd path handed out never names another directory. Synchronous on purpose, as
 * observing is: each step is a microsecond system call.
 */
export class SafePaths {
  private realRoot: string | null = null;
  private readonly byReal = new Map<string, OpenDir>();
  private readonly byDeclared = new Map<string, OpenDir>();
  private readonly open: number[] = [];
  private readonly names = new Map<number, string>();

  constructor(readonly rootDir: string) {}

  /** The host path of a declared absolute path: its parent reached safely, its last component never followed. */
  async hostPath(path: string): Promise<string> {
    const { dir, name } = this.parent(path);
    return inDir(dir.fd, name);
  }

  /** The directory holding `path`, open, and the name in it. */
  parent(path: string): { dir: OpenDir; name: string } {
    const parts = path.split("/").filter((p) => p !== "");
    if (parts.length === 0) return { dir: this.rootOpen(), name: "." };
    const name = parts.pop()!;
    const key = `/${parts.join("/")}`;
    let dir = this.byDeclared.get(key);
    if (!dir) this.byDeclared.set(key, (dir = this.walk(path, parts)));
    return { dir, name };
  }

  /** A directory removed in this reconcile: looked up afresh if a path under it is met again. */
  forget(path: string): void {
    for (const key of [...this.byDeclared.keys()]) if (key === path || key.startsWith(`${path}/`)) this.byDeclared.delete(key);
    this.byReal.clear();
  }

  /** Error text with /proc/self/fd/N put back as the directory it stands for. */
  readable(text: string): string {
    return text.replace(/\/proc\/self\/fd\/(\d+)/g, (all, n: string) => {
      const real = this.names.get(Number(n));
      return real === undefined ? all : `${this.rootDir.replace(/\/+$/, "")}${real}` || "/";
    });
  }

  close(): void {
    const fds = this.open.splice(0);
    this.byReal.clear();
    this.byDeclared.clear();
    this.names.clear();
    for (const fd of fds) closeSync(fd);
  }

  private rootOpen(): OpenDir {
    return this.cached("", () => this.openDir(this.rootDir, O_RDONLY | O_DIRECTORY, ""));
  }

  private cached(real: string, make: () => OpenDir): OpenDir {
    let dir = this.byReal.get(real);
    if (!dir) this.byReal.set(real, (dir = make()));
    return dir;
  }

  private openDir(at: string, flags: number, real: string): OpenDir {
    const fd = openSync(at, flags);
    this.open.push(fd);
    this.names.set(fd, real);
    return { fd, real };
  }

  /**
   * From the root, one component at a time: a directory is opened with O_NOFOLLOW; a symlink is
   * followed only where it sits in a directory that only root can change, and only within the root.
   */
  private walk(path: string, parts: string[]): OpenDir {
    const stack: OpenDir[] = [this.rootOpen()];
    const todo = [...parts];
    let links = 0;
    while (todo.length) {
      const name = todo.shift()!;
      if (name === "" || name === ".") continue;
      if (name === "..") {
        if (stack.length === 1) throw new RootEscapeError(path);
        stack.pop();
        continue;
      }
      const here = stack[stack.length - 1]!;
      const real = `${here.real}/${name}`;
      try {
        stack.push(this.cached(real, () => this.openDir(inDir(here.fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK, real)));
        continue;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT") throw new MissingParentError(path);
        // A symlink opened with O_DIRECTORY | O_NOFOLLOW says ENOTDIR, as anything else that is not a directory.
        if (code !== "ENOTDIR") throw err;
      }
      let st;
      try {
        st = lstatSync(inDir(here.fd, name));
      } catch {
        throw new MissingParentError(path);
      }
      if (!st.isSymbolicLink()) throw Object.assign(new Error(`${path}: ${real} is not a directory`), { code: "ENOTDIR" });
      const dirStat = fstatSync(here.fd);
      if (!rootOnly(dirStat)) throw new UnsafePathError(path, real, dirStat);
      if (++links > MAX_LINKS) throw new Error(`${path}: more than ${MAX_LINKS} symlinks on the way`);
      const target = readlinkSync(inDir(here.fd, name));
      if (target.startsWith("/")) {
        const rel = within((this.realRoot ??= realpathSync(this.rootDir)), target);
        if (rel === null) throw new RootEscapeError(path);
        stack.splice(1);
        todo.unshift(...rel.split("/"));
      } else {
        todo.unshift(...target.split("/"));
      }
    }
    return stack[stack.length - 1]!;
  }
}

/**
 * A directory the host keeps its own files in (service state, logs), made where missing: each
 * level reached safely from the root and made in its parent's descriptor. `at(name)` names a
 * file in it through the descriptor until `close`.
 */
export function openOwnDir(rootDir: string, path: string, mode: number): { at(name: string): string; close(): void } {
  const paths = new SafePaths(rootDir);
  try {
    const parts = path.split("/").filter((p) => p !== "");
    for (let i = 1; i <= parts.length; i++) {
      const { dir, name } = paths.parent(`/${parts.slice(0, i).join("/")}`);
      try {
        mkdirSync(inDir(dir.fd, name), { mode });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
    }
    const { dir } = paths.parent(`/${[...parts, "."].join("/")}`);
    return { at: (name) => inDir(dir.fd, name), close: () => paths.close() };
  } catch (err) {
    paths.close();
    throw err;
  }
}

/** `target` as a path under `root`, or null when it lies outside. */
function within(root: string, target: string): string | null {
  if (root === "/") return target;
  if (target === root) return "";
  return target.startsWith(`${root}/`) ? target.slice(root.length) : null;
}
