// The drift watch on a real temp dir: a directory watch (not one per file) sees owned names change,
// ignores the rest, coalesces a burst of 1,000 rewrites into one or two calls, follows the owned set,
// and a watch that cannot be made (ENOSPC, a path gone) is one log line, never a crash.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync, chmodSync, type watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { DriftWatch, watchedDirectories } from "./drift-watch";
import { waitFor } from "../testing/wait-for";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function setup(opts: { quietMs?: number; maxDelayMs?: number; watchFn?: typeof watch } = {}) {
  const root = mkdtempSync(join(tmpdir(), "mesh-watch-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const lines: { msg: string; code?: string; dir?: string }[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const calls: number[] = [];
  const w = new DriftWatch({
    rootDir: root,
    log,
    quietMs: opts.quietMs ?? 50,
    maxDelayMs: opts.maxDelayMs ?? 300,
    onDrift: (n) => calls.push(n),
    watchFn: opts.watchFn,
  });
  cleanups.push(() => w.close());
  return { root, w, calls, lines };
}
const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms));

describe("drift watch", () => {
  it("watches each directory that holds owned paths once, whatever the number of files", () => {
    const dirs = watchedDirectories(["path:/etc/a", "path:/etc/b", "path:/srv/site", "path:/srv/site/index.html", "package:curl", "service:x.service"], "/r");
    expect([...dirs.keys()].sort()).toEqual(["/r/etc", "/r/srv", "/r/srv/site"]);
    expect([...dirs.get("/r/etc")!].sort()).toEqual(["a", "b"]);
  });

  it("sees an owned file edited, replaced, chmod-ed or removed, an owned symlink repointed, and nothing else in the directory", async () => {
    const { root, w, calls } = setup();
    mkdirSync(join(root, "etc"));
    writeFileSync(join(root, "etc/owned.conf"), "a");
    symlinkSync("owned.conf", join(root, "etc/link"));
    writeFileSync(join(root, "etc/other.conf"), "a");
    w.follow(["path:/etc/owned.conf", "path:/etc/link"]);
    expect(w.watching).toBe(1);

    writeFileSync(join(root, "etc/other.conf"), "b");
    writeFileSync(join(root, "etc/unrelated"), "b");
    await settle();
    expect(calls).toEqual([]);

    for (const change of [
      () => writeFileSync(join(root, "etc/owned.conf"), "edited by hand"),
      () => chmodSync(join(root, "etc/owned.conf"), 0o600),
      () => {
        unlinkSync(join(root, "etc/link"));
        symlinkSync("other.conf", join(root, "etc/link"));
      },
      () => unlinkSync(join(root, "etc/owned.conf")),
    ]) {
      const before = calls.length;
      change();
      await waitFor("a drift call", () => calls.length > before, 2000);
    }
  });

  it("coalesces a burst of 1,000 rewrites into one or two calls", async () => {
    const { root, w, calls } = setup({ quietMs: 300, maxDelayMs: 1500 });
    mkdirSync(join(root, "conf.d"));
    const subjects: string[] = [];
    for (let i = 0; i < 1000; i++) {
      writeFileSync(join(root, `conf.d/f${i}`), "a");
      subjects.push(`path:/conf.d/f${i}`);
    }
    w.follow(subjects);
    expect(w.watching).toBe(1);
    for (let i = 0; i < 1000; i++) writeFileSync(join(root, `conf.d/f${i}`), `rewritten ${i}`);
    await waitFor("a drift call", () => calls.length > 0, 3000);
    await settle(800);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(2);
  });

  it("follows the owned set: a directory no longer owned is no longer watched", async () => {
    const { root, w, calls } = setup();
    mkdirSync(join(root, "a"));
    mkdirSync(join(root, "b"));
    w.follow(["path:/a/x", "path:/b/y"]);
    expect(w.watching).toBe(2);
    w.follow(["path:/b/y"]);
    expect(w.watching).toBe(1);
    writeFileSync(join(root, "a/x"), "1");
    await settle();
    expect(calls).toEqual([]);
    writeFileSync(join(root, "b/y"), "1");
    await waitFor("a drift call", () => calls.length > 0, 2000);
  });

  it("a watch that cannot be made is one log line, and the rest keeps working", async () => {
    const enospc: typeof watch = (() => {
      throw Object.assign(new Error("ENOSPC: System limit for number of file watchers reached"), { code: "ENOSPC" });
    }) as unknown as typeof watch;
    const full = setup({ watchFn: enospc });
    full.w.follow(["path:/etc/a"]);
    full.w.follow(["path:/etc/a", "path:/etc/b"]);
    expect(full.w.watching).toBe(0);
    expect(full.lines.filter((l) => l.code === "ENOSPC")).toHaveLength(1);
    expect(full.lines[0]!.msg).toMatch(/inotify watches exhausted.*the timer still catches it/);

    const { root, w, calls, lines } = setup();
    mkdirSync(join(root, "here"));
    w.follow(["path:/gone/away/x", "path:/here/y"]);
    expect(w.watching).toBe(1);
    expect(lines.filter((l) => l.dir === join(root, "gone/away"))).toHaveLength(1);
    writeFileSync(join(root, "here/y"), "1");
    await waitFor("a drift call", () => calls.length > 0, 2000);
  });
});

describe("drift watch during a reconcile", () => {
  it("drops the events of the reconcile's own writes, and acts on anyone else's once it ends", async () => {
    const { root, w, calls } = setup();
    mkdirSync(join(root, "etc"));
    writeFileSync(join(root, "etc/a"), "1");
    writeFileSync(join(root, "etc/b"), "1");
    w.follow(["path:/etc/a", "path:/etc/b"]);
    w.hold();
    writeFileSync(join(root, "etc/a"), "written by the reconcile");
    await settle();
    w.release(["path:/etc/a"]);
    await settle();
    expect(calls).toEqual([]);

    w.hold();
    writeFileSync(join(root, "etc/a"), "written by the reconcile again");
    writeFileSync(join(root, "etc/b"), "edited by hand meanwhile");
    await settle();
    expect(calls).toEqual([]);
    w.release(["path:/etc/a"]);
    await waitFor("a drift call", () => calls.length > 0, 2000);
  });
});

describe("drift watch on a directory made again", () => {
  it("a watched directory removed and made again is watched again when the owned set is next followed", async () => {
    const { root, w, calls } = setup();
    mkdirSync(join(root, "app"));
    w.follow(["path:/app/conf"]);
    rmSync(join(root, "app"), { recursive: true });
    await settle();
    mkdirSync(join(root, "app"));
    w.follow(["path:/app/conf"]);
    const before = calls.length;
    writeFileSync(join(root, "app/conf"), "1");
    await waitFor("a drift call on the new directory", () => calls.length > before, 2000);
  });
});
