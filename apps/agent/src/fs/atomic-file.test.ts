// The one atomic write, async and sync: the path holds the old file or the new one, the mode is exact
// (not narrowed by the umask), and a failed write leaves no temp file behind.
import { lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isRandomTemp, randomTempBeside, replaceFile, replaceFileSync, replaceWithSymlink } from "./atomic-file";
import { tempDirs } from "../testing/temp-dirs";

const freshDir = tempDirs("mesh-atomic-");

const variants: [string, (path: string, content: string, mode: number) => Promise<void>][] = [
  ["async", (path, content, mode) => replaceFile(path, content, { mode })],
  ["sync", async (path, content, mode) => replaceFileSync(path, content, { mode })],
];

describe.each(variants)("replaceFile (%s)", (_name, write) => {
  it("replaces the file whole, with the exact mode, and leaves nothing beside it", async () => {
    const dir = freshDir();
    const path = join(dir, "f");
    writeFileSync(path, "old");
    const umask = process.umask(0o077);
    try {
      await write(path, "new\n", 0o644);
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(path, "utf8")).toBe("new\n");
    expect(lstatSync(path).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir)).toEqual(["f"]);
  });

  it("fails on a missing directory without leaving a temp file", async () => {
    const dir = freshDir();
    await expect(write(join(dir, "missing", "f"), "x", 0o600)).rejects.toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("replaceFile", () => {
  it("keeps the old file and removes the temp when the content writer throws", async () => {
    const dir = freshDir();
    const path = join(dir, "f");
    writeFileSync(path, "old");
    const failing = async (fh: import("node:fs/promises").FileHandle) => {
      await fh.writeFile("half");
      throw new Error("download cut");
    };
    await expect(replaceFile(path, failing, { mode: 0o600 })).rejects.toThrow("download cut");
    expect(readFileSync(path, "utf8")).toBe("old");
    expect(readdirSync(dir)).toEqual(["f"]);
  });

  it("hands the directory to syncLater instead of syncing it, and calls beforeRename before the path changes", async () => {
    const dir = freshDir();
    const path = join(dir, "f");
    const seen: string[] = [];
    await replaceFile(path, "x", {
      mode: 0o600,
      syncLater: (d) => seen.push(`sync ${d}`),
      beforeRename: () => seen.push(`before rename, exists: ${readdirSync(dir).includes("f")}`),
    });
    expect(seen).toEqual(["before rename, exists: false", `sync ${dir}`]);
  });

  it("puts a symlink in place of a file", async () => {
    const dir = freshDir();
    const path = join(dir, "l");
    writeFileSync(path, "file");
    await replaceWithSymlink(path, "/etc/hostname", {});
    expect(readlinkSync(path)).toBe("/etc/hostname");
    expect(readdirSync(dir)).toEqual(["l"]);
  });
});

describe("randomTempBeside", () => {
  it("names a hidden temp beside the path that isRandomTemp recognises", () => {
    const temp = randomTempBeside("/state/originals/abc");
    expect(temp.startsWith("/state/originals/.abc.tmp-")).toBe(true);
    expect(isRandomTemp(temp.slice("/state/originals/".length))).toBe(true);
    expect(isRandomTemp("abc")).toBe(false);
    expect(isRandomTemp(".abc.mesh-tmp")).toBe(false);
  });
});
