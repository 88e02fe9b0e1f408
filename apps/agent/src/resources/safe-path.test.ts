// SafePaths against a temp --root: which symlinks on the way are followed, which are refused,
// and that a path handed out keeps naming the directory that was checked.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RootEscapeError } from "./root";
import { MissingParentError, SafePaths, UnsafePathError } from "./safe-path";

const asRoot = process.getuid?.() === 0;
let base: string;
let root: string;
let paths: SafePaths;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "mesh-safe-path-"));
  root = join(base, "root");
  mkdirSync(join(root, "usr/lib"), { recursive: true });
  paths = new SafePaths(root);
});
afterEach(() => {
  paths.close();
  rmSync(base, { recursive: true, force: true });
});

const at = (p: string) => join(root, p);

describe("SafePaths", () => {
  it("follows a symlink that only root could have made, relative or absolute within the root", async () => {
    symlinkSync("usr/lib", at("lib"));
    symlinkSync(at("usr"), at("abs"));
    writeFileSync(await paths.hostPath("/lib/a"), "1");
    writeFileSync(await paths.hostPath("/abs/lib/b"), "2");
    expect(readdirSync(at("usr/lib")).sort()).toEqual(["a", "b"]);
  });

  it.skipIf(!asRoot)("refuses a symlink in a directory a non-root user owns", async () => {
    mkdirSync(at("home/u"), { recursive: true });
    chownSync(at("home/u"), 65534, 65534);
    symlinkSync(at("usr/lib"), at("home/u/data"));
    await expect(paths.hostPath("/home/u/data/x")).rejects.toThrow(UnsafePathError);
    await expect(paths.hostPath("/home/u/data/x")).rejects.toThrow(/\/home\/u\/data is a symlink in a directory owned by uid 65534/);
    // The directory itself, and a name in it, are fine: only what lies beyond the link is refused.
    expect(await paths.hostPath("/home/u/data")).toMatch(/^\/proc\/self\/fd\/\d+\/data$/);
  });

  it("refuses a symlink in a directory every user may write, even one root owns (/tmp)", async () => {
    mkdirSync(at("tmp"));
    chmodSync(at("tmp"), 0o1777);
    symlinkSync("../usr", at("tmp/x"));
    await expect(paths.hostPath("/tmp/x/lib/f")).rejects.toThrow(/writable by every user/);
  });

  it("refuses a way out of the root: an absolute target outside, or '..' above it", async () => {
    symlinkSync(base, at("out"));
    symlinkSync("../..", at("usr/up"));
    await expect(paths.hostPath("/out/x")).rejects.toBeInstanceOf(RootEscapeError);
    await expect(paths.hostPath("/usr/up/x")).rejects.toBeInstanceOf(RootEscapeError);
    symlinkSync("..", at("usr/back"));
    expect(await paths.hostPath("/usr/back/usr/lib/f")).toMatch(/\/f$/);
  });

  it("says ENOENT for a missing parent and ENOTDIR for a file on the way", async () => {
    writeFileSync(at("file"), "");
    await expect(paths.hostPath("/no/such/f")).rejects.toBeInstanceOf(MissingParentError);
    await expect(paths.hostPath("/no/such/f")).rejects.toMatchObject({ code: "ENOENT" });
    await expect(paths.hostPath("/file/f")).rejects.toMatchObject({ code: "ENOTDIR" });
    mkdirSync(at("no/such"), { recursive: true });
    expect(await paths.hostPath("/no/such/f")).toMatch(/\/f$/); // a failure is not cached
  });

  it("a path handed out keeps naming the checked directory when its name is swapped for a symlink", async () => {
    mkdirSync(at("srv/site"), { recursive: true });
    mkdirSync(join(base, "elsewhere"));
    const hostPath = await paths.hostPath("/srv/site/index.html");
    renameSync(at("srv/site"), at("srv/old"));
    symlinkSync(join(base, "elsewhere"), at("srv/site"));
    writeFileSync(hostPath, "hello");
    expect(readFileSync(at("srv/old/index.html"), "utf8")).toBe("hello");
    expect(readdirSync(join(base, "elsewhere"))).toEqual([]);
  });

  it("puts directory names back into error text, and closes every descriptor it opened", async () => {
    const before = readdirSync("/proc/self/fd").length;
    const hostPath = await paths.hostPath("/usr/lib/x");
    expect(paths.readable(`ENOENT: open '${hostPath}'`)).toBe(`ENOENT: open '${root}/usr/lib/x'`);
    expect(readdirSync("/proc/self/fd").length).toBeGreaterThan(before);
    paths.close();
    expect(readdirSync("/proc/self/fd").length).toBe(before);
  });
});
