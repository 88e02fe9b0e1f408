// Crash safety, store loss and failure isolation through the whole reconcile: open
// intents are settled by observing, a lost store is reported, a failure skips only its dependants.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { Declaration, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import { digestOf } from "../resources/observed";
import { providerFor } from "../resources/providers";
import { Root } from "../resources/root";
import { MemoryStore } from "../store/memory-store";
import { OWNERSHIP_KEY, Ownership, saveOwnership, type OwnedRecord } from "../store/ownership";
import { reconcile } from "./reconcile";
import { tempDirs } from "../testing/temp-dirs";

const freshDir = tempDirs("mesh-rec-");
let rootDir: string;
let store: MemoryStore;
beforeEach(() => {
  rootDir = freshDir();
  store = new MemoryStore();
});

const dir: ResourceInput = { type: "directory", id: "d", path: "/d", mode: "0755" };
const declaredState = (r: ResourceInput) => {
  const p = Declaration.parse({ version: 1, resources: [r] }).resources[0]!;
  return providerFor(p.type).declared(p);
};
const run = (resources: ResourceInput[] | null, enrolled = true) =>
  reconcile(
    { store, root: new Root(rootDir), log: silentLogger(), enrolled },
    { declaration: resources ? Declaration.parse({ version: 1, resources }) : null },
  );
const stored = async () => Ownership.parse(JSON.parse((await store.read(OWNERSHIP_KEY))!.toString())).records;
const withIntent = (records: OwnedRecord[]): Ownership => ({ format: 2, records });
const createIntent: OwnedRecord = {
  id: "d",
  type: "directory",
  subject: "path:/d",
  applied: digestOf(declaredState(dir)),
  intent: { op: "create", want: declaredState(dir) },
};

describe("reconcile after a crash", () => {
  it("owns what an interrupted create made, and removes it once it is no longer declared", async () => {
    await saveOwnership(store, withIntent([createIntent]));
    mkdirSync(join(rootDir, "d"), { mode: 0o700 });
    const { report, changes } = await run([]);
    expect(changes.map((c) => c.kind)).toEqual(["removed"]);
    expect(existsSync(join(rootDir, "d"))).toBe(false);
    expect(report.owned).toEqual([]);
  });

  it("finishes a half-made directory as an update, not as drift", async () => {
    await saveOwnership(store, withIntent([createIntent]));
    mkdirSync(join(rootDir, "d"));
    chmodSync(join(rootDir, "d"), 0o700);
    const { report, changes } = await run([dir]);
    expect(changes.map((c) => `${c.kind}:${c.id}`)).toEqual(["updated:d"]);
    expect(report.drift).toEqual([]);
    expect(report.owned.map((o) => o.id)).toEqual(["d"]);
  });

  it("drops an intent whose create never happened", async () => {
    await saveOwnership(store, withIntent([createIntent]));
    const { report } = await run(null);
    expect(report.owned).toEqual([]);
    expect(await stored()).toEqual([]);
  });

  it("removes the temp file a killed write left beside its path", async () => {
    const f: ResourceInput = { type: "file", id: "f", path: "/f", content: "x" };
    await saveOwnership(
      store,
      withIntent([{ id: "f", type: "file", subject: "path:/f", applied: digestOf(declaredState(f)), intent: { op: "create", want: declaredState(f) } }]),
    );
    writeFileSync(join(rootDir, ".f.mesh-tmp"), "half");
    await run([f]);
    expect(existsSync(join(rootDir, ".f.mesh-tmp"))).toBe(false);
    expect(readFileSync(join(rootDir, "f"), "utf8")).toBe("x");
  });

  it("does not take over a file that appeared where a create was interrupted: it is adopted instead", async () => {
    const f: ResourceInput = { type: "file", id: "f", path: "/f", content: "mine" };
    await saveOwnership(
      store,
      withIntent([{ id: "f", type: "file", subject: "path:/f", applied: digestOf(declaredState(f)), intent: { op: "create", want: declaredState(f) } }]),
    );
    writeFileSync(join(rootDir, "f"), "theirs");
    const first = await run([f]);
    expect(first.changes.map((c) => c.kind)).toEqual(["adopted"]);
    expect(first.report.owned).toEqual([expect.objectContaining({ id: "f", adopted: true })]);
    await run([]);
    expect(readFileSync(join(rootDir, "f"), "utf8")).toBe("theirs");
  });

  it("with no declaration held, only observes and reports", async () => {
    mkdirSync(join(rootDir, "d"));
    await saveOwnership(store, withIntent([{ id: "d", type: "directory", subject: "path:/d", applied: digestOf(declaredState(dir)) }]));
    const { report, changes } = await run(null);
    expect(changes).toEqual([]);
    expect(report.declarationVersion).toBe(0);
    expect(report.owned.map((o) => o.id)).toEqual(["d"]);
  });

  it("never leaves an intent behind after a reconcile", async () => {
    const many: ResourceInput[] = [dir];
    for (let i = 0; i < 150; i++) many.push({ type: "file", id: `f${i}`, path: `/d/f${i}`, content: `${i}` });
    const { report } = await run(many);
    expect(report.errors).toEqual([]);
    expect(report.owned).toHaveLength(151);
    expect((await stored()).filter((r) => r.intent)).toEqual([]);
  });
});

describe("failures", () => {
  it("a failed resource skips its dependants (by parent and by after) and nothing else", async () => {
    writeFileSync(join(rootDir, "blocker"), "a file where a directory is declared");
    const { report } = await run([
      { type: "directory", id: "blocked", path: "/blocker" },
      { type: "file", id: "inside", path: "/blocker/f", content: "x" },
      { type: "file", id: "later", path: "/later", content: "x", after: ["inside"] },
      { type: "file", id: "free", path: "/free", content: "x" },
    ]);
    expect(report.errors).toEqual([{ id: "blocked", message: expect.stringMatching(/is a file; not replaced by a directory/) }]);
    expect(report.skipped).toEqual([
      { id: "inside", reason: 'parent directory "blocked" failed' },
      { id: "later", reason: 'after "inside" was skipped' },
    ]);
    expect(report.owned.map((o) => o.id)).toContain("free");
    expect(existsSync(join(rootDir, "later"))).toBe(false);
    // The pre-existing file was adopted before the change failed: nothing of it was changed or taken.
    expect(readFileSync(join(rootDir, "blocker"), "utf8")).toBe("a file where a directory is declared");
    expect((await stored()).map((r) => r.id)).toEqual(["free"]);
  });

  it("a failed store write stops the reconcile before the machine changes", async () => {
    store.failNextWrite = new Error("disk full");
    await expect(run([dir])).rejects.toThrow(/disk full/);
    expect(existsSync(join(rootDir, "d"))).toBe(false);
  });

  it("a service whose unit does not exist fails on its own, clearly; the rest applies", async () => {
    // The host's own service manager, whatever PID 1 is here: the unit is looked for under the sandbox root.
    const { report } = await reconcile(
      { store, root: new Root(rootDir), log: silentLogger(), enrolled: true, systemdIsPid1: false },
      { declaration: Declaration.parse({ version: 1, resources: [{ type: "service", id: "web", unit: "nginx.service", enabled: true }, dir] }) },
    );
    expect(report.errors).toEqual([{ id: "web", message: expect.stringContaining("unit nginx.service not found") }]);
    expect(report.owned.map((o) => o.id)).toContain("d");
  });
});

describe("store loss", () => {
  for (const [name, bytes] of [
    ["empty", ""],
    ["truncated", '{"format":2,"records":[\n {"id":"d","ty'],
    ["garbage", "{ not json"],
  ] as const) {
    it(`an enrolled host with a ${name} store reports storeLost, keeps it aside, and applies again`, async () => {
      await store.write(OWNERSHIP_KEY, bytes);
      const { report } = await run([dir]);
      expect(report.storeLost).toBe(true);
      expect(report.owned.map((o) => o.id)).toEqual(["d"]);
      const aside = store.keys().find((k) => k.startsWith("store.json.lost-"));
      expect((await store.read(aside!))?.toString()).toBe(bytes);
      const cleared = await reconcile(
        { store, root: new Root(rootDir), log: silentLogger(), enrolled: true },
        { declaration: Declaration.parse({ version: 1, resources: [dir] }), clearLost: true },
      );
      expect(cleared.report.storeLost).toBe(false);
    });
  }

  it("what a lost store recorded is adopted again, so leaving restores it rather than deleting it", async () => {
    mkdirSync(join(rootDir, "d"));
    chmodSync(join(rootDir, "d"), 0o755);
    const { report } = await run([dir]);
    expect(report.storeLost).toBe(true);
    expect(report.owned).toEqual([expect.objectContaining({ id: "d", adopted: true })]);
    await run([]);
    expect(existsSync(join(rootDir, "d"))).toBe(true);
  });

  it("a host that is not enrolled starts with a fresh store, not a lost one", async () => {
    const { report } = await run([dir], false);
    expect(report.storeLost).toBe(false);
  });
});

describe("reconcile aborted (the loop's deadline)", () => {
  const dirs: ResourceInput[] = [dir, { type: "directory", id: "e", path: "/e", mode: "0755" }];

  it("throws the signal's reason when aborted before it starts, having changed nothing", async () => {
    const abort = new AbortController();
    abort.abort(new Error("past the deadline"));
    await expect(
      reconcile(
        { store, root: new Root(rootDir), log: silentLogger(), enrolled: true, signal: abort.signal },
        { declaration: Declaration.parse({ version: 1, resources: dirs }) },
      ),
    ).rejects.toThrow("past the deadline");
    expect(existsSync(join(rootDir, "d"))).toBe(false);
  });

  it("starts no change once aborted, and the next run settles the intents it left and finishes", async () => {
    const abort = new AbortController();
    // Aborted once the window's intents are on disk, before its changes.
    const write = store.write.bind(store);
    store.write = async (key, data, options) => {
      await write(key, data, options);
      if (key === OWNERSHIP_KEY && String(data).includes('"intent"')) abort.abort(new Error("past the deadline"));
    };
    await expect(
      reconcile(
        { store, root: new Root(rootDir), log: silentLogger(), enrolled: true, signal: abort.signal },
        { declaration: Declaration.parse({ version: 1, resources: dirs }) },
      ),
    ).rejects.toThrow("past the deadline");
    expect(existsSync(join(rootDir, "d"))).toBe(false);
    expect(existsSync(join(rootDir, "e"))).toBe(false);
    expect((await stored()).every((r) => r.intent)).toBe(true);
    store.write = write;
    const { report } = await run(dirs);
    expect(report.errors).toEqual([]);
    expect(report.owned.map((o) => o.id).sort()).toEqual(["d", "e"]);
    expect(existsSync(join(rootDir, "e"))).toBe(true);
  });
});
