// The drift watch's limit, with fake timers and a stand-in for fs.watch: a path whose changes started
// 5 reconciles within 60 s (another process rewriting an `onDrift: correct` file) no longer starts
// any until the window passes, said in one log line; other paths still do.
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, type FSWatcher, type watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DRIFT_LIMIT, DRIFT_WINDOW_MS, DriftWatch } from "./drift-watch";

let root = "";
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mesh-watch-limit-"));
  vi.useFakeTimers({ now: new Date("2030-01-01T00:00:00Z") });
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(root, { recursive: true, force: true });
});

function setup() {
  const listeners = new Map<string, (event: string, filename: string | null) => void>();
  const watchFn = ((dir: string, _opts: unknown, listener: (event: string, filename: string | null) => void) => {
    listeners.set(dir, listener);
    return Object.assign(new EventEmitter(), { close: () => listeners.delete(dir) }) as unknown as FSWatcher;
  }) as unknown as typeof watch;
  const lines: { msg: string; path?: string; reconciles?: number; until?: string }[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const calls: number[] = [];
  const w = new DriftWatch({ rootDir: root, log, onDrift: (n) => calls.push(n), watchFn });
  w.follow(["path:/etc/owned.conf", "path:/etc/other.conf"]);
  const change = (name: string) => listeners.get(join(root, "etc"))!("change", name);
  /** One burst of changes to `name`, and the quiet time after it. */
  const burst = (name: string) => {
    change(name);
    change(name);
    vi.advanceTimersByTime(1_000);
  };
  return { w, calls, lines, change, burst };
}

const limited = (lines: { msg: string }[]) => lines.filter((l) => /keeps coming back/.test(l.msg));

describe("drift watch limit", () => {
  it(`stops reacting to a path after ${DRIFT_LIMIT} reconciles in ${DRIFT_WINDOW_MS / 1000} s, until the window passes; one log line`, () => {
    const { w, calls, lines, change, burst } = setup();
    for (let i = 0; i < DRIFT_LIMIT; i++) burst("owned.conf");
    expect(calls).toHaveLength(DRIFT_LIMIT);
    expect(limited(lines)).toEqual([expect.objectContaining({ path: "/etc/owned.conf", reconciles: DRIFT_LIMIT, until: "2030-01-01T00:01:00.300Z" })]);
    // Rewritten again and again: nothing more, and no more lines.
    for (let i = 0; i < 20; i++) burst("owned.conf");
    expect(calls).toHaveLength(DRIFT_LIMIT);
    expect(limited(lines)).toHaveLength(1);
    // Another owned path still starts a reconcile.
    burst("other.conf");
    expect(calls).toHaveLength(DRIFT_LIMIT + 1);
    // Held during a reconcile, its events are not someone else's change either.
    w.hold();
    burst("owned.conf");
    w.release([]);
    vi.advanceTimersByTime(1_000);
    expect(calls).toHaveLength(DRIFT_LIMIT + 1);
    // The window passed (60 s from the first of the five, fired after the 300 ms quiet time): reacted to again.
    vi.setSystemTime(new Date("2030-01-01T00:01:00.299Z"));
    change("owned.conf");
    vi.advanceTimersByTime(1_000);
    expect(calls).toHaveLength(DRIFT_LIMIT + 1);
    vi.setSystemTime(new Date("2030-01-01T00:01:00.300Z"));
    burst("owned.conf");
    expect(calls).toHaveLength(DRIFT_LIMIT + 2);
    w.close();
  });

  it("reconciles spread wider than the window never reach the limit", () => {
    const { w, calls, lines, burst } = setup();
    for (let i = 0; i < 3 * DRIFT_LIMIT; i++) {
      burst("owned.conf");
      vi.advanceTimersByTime(DRIFT_WINDOW_MS / (DRIFT_LIMIT - 1));
    }
    expect(calls).toHaveLength(3 * DRIFT_LIMIT);
    expect(limited(lines)).toEqual([]);
    w.close();
  });
});

describe("drift watch and the host's own writes", () => {
  it("takes an event heard after a reconcile on a path it wrote, still as it left it, as its own, however late", () => {
    const { w, calls, change } = setup();
    mkdirSync(join(root, "etc"), { recursive: true });
    writeFileSync(join(root, "etc/owned.conf"), "as the host wrote it\n");
    w.hold();
    w.release(["path:/etc/owned.conf"]);
    // The run's own write, heard late (a busy event loop, seconds later): the file is as the run left it, so no reconcile.
    vi.advanceTimersByTime(5_000);
    change("owned.conf");
    vi.advanceTimersByTime(2_000);
    expect(calls).toHaveLength(0);
    // Another path it did not write is someone else's change.
    change("other.conf");
    vi.advanceTimersByTime(2_000);
    expect(calls).toHaveLength(1);
    // A hand edit right after the run (the file is no longer as it left it) is a change, grace or not.
    w.hold();
    w.release(["path:/etc/owned.conf"]);
    writeFileSync(join(root, "etc/owned.conf"), "edited by hand, longer than before\n");
    change("owned.conf");
    vi.advanceTimersByTime(2_000);
    expect(calls).toHaveLength(2);
  });
});
