// The file and directory providers against a temp --root, driven through one
// reconcile at a time as the host drives them: create, no-op, update, drift, remove.
import { mkdtempSync, promises as fs, rmSync, statSync, readFileSync, existsSync, symlinkSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { Declaration, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import { reconcile } from "../reconcile/reconcile";
import { MemoryStore } from "../store/memory-store";
import { directoryProvider } from "./directory";
import { fileProvider } from "./file";
import { digestOf, observePath } from "./observed";
import { Root, RootEscapeError } from "./root";

const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

let rootDir: string;
let store: MemoryStore;
const mode = (p: string) => (statSync(join(rootDir, p)).mode & 0o7777).toString(8).padStart(4, "0");

beforeEach(() => {
  const base = mkdtempSync(join(tmpdir(), "mesh-res-"));
  temps.push(base);
  rootDir = join(base, "root");
  mkdirSync(rootDir);
  store = new MemoryStore();
});

function run(resources: ResourceInput[], version = 1) {
  return reconcile(
    { store, root: new Root(rootDir), log: silentLogger(), enrolled: false },
    { declaration: Declaration.parse({ version, resources }) },
  );
}

const site: ResourceInput = { type: "directory", id: "site", path: "/srv", mode: "0750" };
const index: ResourceInput = { type: "file", id: "index", path: "/srv/index.html", content: "<h1>hello</h1>\n", mode: "0640" };

describe("file and directory under --root", () => {
  it("creates, then is a no-op", async () => {
    const first = await run([index, site]);
    expect(first.report.errors).toEqual([]);
    expect(first.changes.map((c) => `${c.kind}:${c.id}`)).toEqual(["created:site", "created:index"]);
    expect(readFileSync(join(rootDir, "srv/index.html"), "utf8")).toBe("<h1>hello</h1>\n");
    expect(mode("srv")).toBe("0750");
    expect(mode("srv/index.html")).toBe("0640");
    expect(first.report.owned.map((o) => o.id).sort()).toEqual(["index", "site"]);

    const second = await run([index, site]);
    expect(second.changes).toEqual([]);
    expect(second.unchanged).toBe(2);
    expect(second.report.drift).toEqual([]);
    expect(second.report.owned).toEqual(first.report.owned);
  });

  it("owned digests equal the declared digests when nothing drifted", async () => {
    const { report } = await run([site, index]);
    const parsed = Declaration.parse({ version: 1, resources: [site, index] }).resources;
    const declared = Object.fromEntries(parsed.map((r) => [r.id, digestOf(r.type === "file" ? fileProvider.declared(r) : directoryProvider.declared(r))]));
    for (const o of report.owned) expect(o.digest).toBe(declared[o.id]);
  });

  it("updates content and mode when the declaration changes (an update, not drift)", async () => {
    await run([site, index]);
    const { report, changes } = await run([site, { ...index, content: "v2", mode: "0600" }], 2);
    expect(changes.map((c) => `${c.kind}:${c.id}`)).toEqual(["updated:index"]);
    expect(report.drift).toEqual([]);
    expect(readFileSync(join(rootDir, "srv/index.html"), "utf8")).toBe("v2");
    expect(mode("srv/index.html")).toBe("0600");
  });

  it("detects drift in mode, content and presence, corrects it and reports it", async () => {
    await run([site, index]);
    await fs.chmod(join(rootDir, "srv/index.html"), 0o644);
    let { report } = await run([site, index]);
    expect(report.drift).toEqual([
      expect.objectContaining({ id: "index", type: "file", description: "mode 0644, declared 0640", corrected: true }),
    ]);
    expect(mode("srv/index.html")).toBe("0640");

    writeFileSync(join(rootDir, "srv/index.html"), "defaced");
    ({ report } = await run([site, index]));
    expect(report.drift[0]?.description).toMatch(/^content differs \(sha256 [0-9a-f]{12}…, declared [0-9a-f]{12}…\)$/);
    expect(readFileSync(join(rootDir, "srv/index.html"), "utf8")).toBe("<h1>hello</h1>\n");

    rmSync(join(rootDir, "srv/index.html"));
    ({ report } = await run([site, index]));
    expect(report.drift).toEqual([expect.objectContaining({ id: "index", description: "missing", observed: null, corrected: true })]);
    expect(existsSync(join(rootDir, "srv/index.html"))).toBe(true);

    ({ report } = await run([site, index]));
    expect(report.drift).toEqual([]);
  });

  it("removes what left the declaration, and only what it owns", async () => {
    writeFileSync(join(rootDir, "keep.txt"), "not the host's");
    await run([site, index]);
    const { report, changes } = await run([], 2);
    expect(changes.map((c) => `${c.kind}:${c.id}`)).toEqual(["removed:index", "removed:site"]);
    expect(report.owned).toEqual([]);
    expect(existsSync(join(rootDir, "srv"))).toBe(false);
    expect(readFileSync(join(rootDir, "keep.txt"), "utf8")).toBe("not the host's");
  });

  it("keeps a non-empty owned directory with what it does not own, and reports it", async () => {
    await run([site, index]);
    writeFileSync(join(rootDir, "srv/upload.log"), "someone else's");
    const { report } = await run([], 2);
    expect(existsSync(join(rootDir, "srv/index.html"))).toBe(false);
    expect(readFileSync(join(rootDir, "srv/upload.log"), "utf8")).toBe("someone else's");
    expect(report.errors).toEqual([{ id: "site", message: expect.stringContaining("/srv left in place: not empty") }]);
    // Still owned, still tried: once the foreign file is gone the directory goes too.
    expect(report.owned.map((o) => o.id)).toEqual(["site"]);
    rmSync(join(rootDir, "srv/upload.log"));
    const again = await run([], 2);
    expect(again.report.errors).toEqual([]);
    expect(existsSync(join(rootDir, "srv"))).toBe(false);
  });

  it("an adopted directory is owned, but what others put in it is not", async () => {
    mkdirSync(join(rootDir, "srv"));
    // Adopted: it already matched, so the host owns it now and would remove it.
    await fs.chmod(join(rootDir, "srv"), 0o750);
    const first = await run([site]);
    expect(first.changes.map((c) => c.kind)).toEqual(["adopted"]);
    // A file the host never recorded is not touched by any removal.
    writeFileSync(join(rootDir, "srv/other"), "x");
    await run([], 2);
    expect(existsSync(join(rootDir, "srv/other"))).toBe(true);
  });

  it("refuses a path that escapes the root through a symlink", async () => {
    const outside = mkdtempSync(join(tmpdir(), "mesh-outside-"));
    temps.push(outside);
    symlinkSync(outside, join(rootDir, "escape"));
    const { report } = await run([{ type: "file", id: "evil", path: "/escape/passwd", content: "x" }]);
    expect(report.errors).toEqual([{ id: "evil", message: expect.stringContaining("outside the root") }]);
    expect(report.owned).toEqual([]);
    expect(existsSync(join(outside, "passwd"))).toBe(false);
    await expect(new Root(rootDir).resolve("/escape/passwd")).rejects.toBeInstanceOf(RootEscapeError);
  });

  it("refuses a dangling symlink on the way", async () => {
    symlinkSync("/nonexistent-mesh-target", join(rootDir, "dangling"));
    await expect(new Root(rootDir).resolve("/dangling/x")).rejects.toBeInstanceOf(RootEscapeError);
  });

  it("replaces a symlink at a file's path instead of writing through it", async () => {
    const outside = mkdtempSync(join(tmpdir(), "mesh-outside-"));
    temps.push(outside);
    writeFileSync(join(outside, "target"), "outside");
    symlinkSync(join(outside, "target"), join(rootDir, "link"));
    const { report } = await run([{ type: "file", id: "f", path: "/link", content: "inside" }]);
    expect(report.errors).toEqual([]);
    expect(readFileSync(join(outside, "target"), "utf8")).toBe("outside");
    expect(readFileSync(join(rootDir, "link"), "utf8")).toBe("inside");
  });

  it("a file whose parent is not there is an error, and nothing is owned", async () => {
    const { report } = await run([{ type: "file", id: "f", path: "/nope/f", content: "x" }]);
    expect(report.errors).toEqual([{ id: "f", message: expect.stringContaining("parent directory") }]);
    expect(report.owned).toEqual([]);
  });

  it("does not replace a directory with a file", async () => {
    mkdirSync(join(rootDir, "d"));
    const { report } = await run([{ type: "file", id: "f", path: "/d", content: "x" }]);
    expect(report.errors[0]?.message).toMatch(/is a directory; not replaced/);
    expect(statSync(join(rootDir, "d")).isDirectory()).toBe(true);
  });

  it("observes files, directories and absence", async () => {
    writeFileSync(join(rootDir, "f"), "abc", { mode: 0o600 });
    await fs.chmod(join(rootDir, "f"), 0o600);
    expect(await observePath(join(rootDir, "f"), "/f")).toEqual({
      type: "file",
      path: "/f",
      mode: "0600",
      sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    });
    expect(await observePath(join(rootDir, "missing"), "/missing")).toBeNull();
  });
});
