// Drift seen in seconds: inotify (fs.watch) on the directories that hold what the host owns
// (one watch per parent directory, never one per file), events filtered to the owned names, and
// bursts coalesced into one reconcile. The timer stays for packages, services and as the
// backstop; a watch that cannot be made (ENOSPC, a path gone) leaves that directory to the timer.
// A path whose changes started `limit` reconciles within `windowMs` (another process rewriting an
// `onDrift: correct` file, forever) is left to the timer until that window passes: one log line.
import { existsSync, lstatSync, statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { reasonOf } from "../host-error";
import type { Logger } from "../log";
import { systemClock, unref, type Clock } from "../clock";

export interface DriftWatchOptions {
  /** The --root every declared path is under. */
  rootDir: string;
  /** Called once per coalesced burst of changes to owned paths. */
  onDrift: (paths: number) => void;
  log: Logger;
  /** Quiet time after the last event before the reconcile (ms). */
  quietMs?: number;
  /** Never longer than this after the first event of a burst (ms): a steady stream still reconciles. */
  maxDelayMs?: number;
  /** At most this many reconciles started by one path's changes within `windowMs`; then its events are ignored until the window passes. */
  limit?: number;
  windowMs?: number;
  /** For tests: stands in for fs.watch (to fail like ENOSPC). */
  watchFn?: typeof watch;
  /** Time and the burst timer (the real clock by default). */
  clock?: Clock;
}

export const DRIFT_QUIET_MS = 300;
export const DRIFT_MAX_DELAY_MS = 1_500;
export const DRIFT_LIMIT = 5;
export const DRIFT_WINDOW_MS = 60_000;

/** The owned paths (subjects `path:/x`) by the directory that holds them. */
export function watchedDirectories(subjects: Iterable<string>, rootDir: string): Map<string, Set<string>> {
  const byDir = new Map<string, Set<string>>();
  for (const subject of subjects) {
    if (!subject.startsWith("path:")) continue;
    const path = join(rootDir, subject.slice(5));
    const dir = dirname(path);
    let names = byDir.get(dir);
    if (!names) byDir.set(dir, (names = new Set()));
    names.add(basename(path));
  }
  return byDir;
}

export class DriftWatch {
  /** By directory; `ino` tells a directory removed and made again (whose old watch is dead) from the one watched. */
  private readonly watches = new Map<string, { watcher: FSWatcher; names: Set<string>; ino: number }>();
  /** Directories that could not be watched, with the reason: logged once each, tried again when followed. */
  private readonly failed = new Map<string, string>();
  private timer: unknown = null;
  private readonly clock: Clock;
  private firstAt = 0;
  private hits = 0;
  /** The paths (or directories, for events without a name) whose changes the pending burst holds. */
  private burst = new Set<string>();
  /** By path: when reconciles its changes started ran (within the window), oldest first. */
  private readonly started = new Map<string, number[]>();
  /** By path: until when its events are ignored (it reached the limit). */
  private readonly mutedUntil = new Map<string, number>();
  private closed = false;
  /** Set while a reconcile runs: events are kept here (full paths) and judged when it ends. */
  private held: Set<string> | null = null;
  /**
   * Paths a reconcile wrote, as it left them (stat). An event on a path still exactly so is no change,
   * however late it is heard (inotify events reach a busy event loop seconds after the write): any later
   * write by anyone changes its ctime. Replaced by the next run that writes the path; dropped once it differs.
   */
  private readonly ownWrites = new Map<string, string | null>();

  constructor(private readonly opts: DriftWatchOptions) {
    this.clock = opts.clock ?? systemClock;
  }

  /** How many directories are watched now (for tests and status). */
  get watching(): number {
    return this.watches.size;
  }

  /** Follows the owned set as it is now: watches added for new directories, dropped for ones left. */
  follow(subjects: Iterable<string>): void {
    if (this.closed) return;
    const wanted = watchedDirectories(subjects, this.opts.rootDir);
    for (const [dir, w] of this.watches) {
      if (!wanted.has(dir)) {
        w.watcher.close();
        this.watches.delete(dir);
      }
    }
    for (const [dir, names] of wanted) {
      const held = this.watches.get(dir);
      if (held && inode(dir) === held.ino) {
        held.names = names;
        continue;
      }
      if (held) {
        held.watcher.close();
        this.watches.delete(dir);
      }
      this.add(dir, names);
    }
    for (const dir of this.failed.keys()) if (!wanted.has(dir)) this.failed.delete(dir);
    for (const path of this.ownWrites.keys()) if (!wanted.get(dirname(path))?.has(basename(path))) this.ownWrites.delete(path);
  }

  /** A reconcile starts: what changes now may be its own writes, judged by `release`. */
  hold(): void {
    this.held ??= new Set();
  }

  /**
   * The reconcile ended, having changed `changed` (subjects `path:/x`): events on those are its own
   * writes and are dropped; events on any other owned path were someone else's, and start a reconcile.
   * A failed run passes null: its events are dropped too (failures are retried on their own schedule).
   */
  release(changed: Iterable<string> | null): void {
    const held = this.held;
    this.held = null;
    if (!held || changed === null) return;
    const own = new Set<string>();
    for (const subject of changed) if (subject.startsWith("path:")) own.add(join(this.opts.rootDir, subject.slice(5)));
    // inotify events reach the event loop when it gets to them: on a busy machine the run's own writes
    // can be heard long after it ended. They are its own while the path is as the run left it.
    for (const path of own) this.ownWrites.set(path, statOf(path));
    const others = [...held].filter((path) => !own.has(path) && !this.muted(path, this.clock.now()));
    if (others.length > 0) this.schedule(others);
  }

  close(): void {
    this.closed = true;
    this.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const w of this.watches.values()) w.watcher.close();
    this.watches.clear();
  }

  private add(dir: string, names: Set<string>): void {
    let watcher: FSWatcher;
    try {
      watcher = (this.opts.watchFn ?? watch)(dir, { persistent: false }, (event, filename) => this.event(dir, filename, event));
    } catch (err) {
      this.degrade(dir, err);
      return;
    }
    watcher.on("error", (err) => {
      watcher.close();
      if (this.watches.get(dir)?.watcher === watcher) this.watches.delete(dir);
      this.degrade(dir, err);
      // The directory went (or moved): what it held has changed, so look.
      if (!this.muted(dir, this.clock.now())) this.schedule([dir]);
    });
    this.failed.delete(dir);
    this.watches.set(dir, { watcher, names, ino: inode(dir) });
  }

  /** One log line per directory that cannot be watched; the timer still catches its drift. */
  private degrade(dir: string, err: unknown): void {
    const reason = reasonOf(err);
    if (this.failed.has(dir)) return;
    this.failed.set(dir, reason);
    const code = (err as NodeJS.ErrnoException)?.code;
    this.opts.log.warn(
      { dir, reason, ...(code ? { code } : {}) },
      code === "ENOSPC"
        ? "cannot watch for drift (inotify watches exhausted: fs.inotify.max_user_watches); the timer still catches it"
        : "cannot watch for drift; the timer still catches it",
    );
  }

  private event(dir: string, filename: string | Buffer | null, kind = "change"): void {
    const held = this.watches.get(dir);
    if (!held) return;
    // The watched directory itself went (removed or moved): its watch is dead even if a new directory
    // there gets the same inode number, so it is dropped now and made again on the next follow.
    if (kind === "rename" && !existsSync(dir)) {
      held.watcher.close();
      this.watches.delete(dir);
      if (!this.muted(dir, this.clock.now())) this.schedule([dir]);
      return;
    }
    // No name (an event on the directory itself) or an owned name: look. Anything else in the directory is not ours.
    if (filename !== null && !held.names.has(filename.toString())) return;
    const path = filename === null ? dir : join(dir, filename.toString());
    if (this.muted(path, this.clock.now())) return;
    // A late event of a run's own write: the path is still exactly as the run left it, so nothing changed.
    if (this.ownWrites.has(path)) {
      if (statOf(path) === this.ownWrites.get(path)) return;
      this.ownWrites.delete(path);
    }
    if (this.held) {
      // During a reconcile: its own writes or someone else's, told apart when it ends. An event on the directory itself counts as someone else's.
      this.held.add(path);
      return;
    }
    this.schedule([path]);
  }

  /** Whether `path` reached the limit and its window has not passed yet (the timer covers it meanwhile). */
  private muted(path: string, now: number): boolean {
    const until = this.mutedUntil.get(path);
    if (until === undefined) return false;
    if (now < until) return true;
    this.mutedUntil.delete(path);
    return false;
  }

  private schedule(paths: Iterable<string>): void {
    if (this.closed) return;
    const now = this.clock.now();
    if (!this.timer) this.firstAt = now;
    for (const path of paths) this.burst.add(path);
    this.hits++;
    this.clock.clearTimeout(this.timer);
    const quiet = this.opts.quietMs ?? DRIFT_QUIET_MS;
    const latest = this.firstAt + (this.opts.maxDelayMs ?? DRIFT_MAX_DELAY_MS);
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(0, Math.min(quiet, latest - now)));
    unref(this.timer);
  }

  private fire(): void {
    this.timer = null;
    const hits = this.hits;
    this.hits = 0;
    const burst = this.burst;
    this.burst = new Set();
    if (this.closed) return;
    this.count(burst, this.clock.now());
    this.opts.onDrift(hits);
  }

  /** Counts this reconcile against every path in the burst; a path at the limit is muted until its window passes. */
  private count(burst: Set<string>, now: number): void {
    const limit = this.opts.limit ?? DRIFT_LIMIT;
    const windowMs = this.opts.windowMs ?? DRIFT_WINDOW_MS;
    for (const [path, times] of this.started) {
      while (times.length > 0 && times[0]! <= now - windowMs) times.shift();
      if (times.length === 0 && !burst.has(path)) this.started.delete(path);
    }
    for (const path of burst) {
      let times = this.started.get(path);
      if (!times) this.started.set(path, (times = []));
      times.push(now);
      if (times.length < limit) continue;
      const until = times[0]! + windowMs;
      this.mutedUntil.set(path, until);
      this.started.delete(path);
      this.opts.log.warn(
        { path: "/" + relative(this.opts.rootDir, path), reconciles: limit, windowMs, until: new Date(until).toISOString() },
        "drift keeps coming back on this path (another process rewriting it?): its changes no longer start a reconcile until the window passes; the timer still catches it",
      );
    }
  }
}

function inode(dir: string): number {
  try {
    return statSync(dir).ino;
  } catch {
    return -1;
  }
}

/** What a path is now, enough to tell whether anything wrote it since (null: it is not there). */
function statOf(path: string): string | null {
  try {
    const st = lstatSync(path, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;
  } catch {
    return null;
  }
}
