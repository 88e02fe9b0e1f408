// Crash safety and store loss through the whole reconcile: an interrupted create
// is resolved by observing, and a lost store is reported, not fatal.
import { chmodSync, mkdtempSync, mkdirSync, rmSync, existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { Declaration, type ResourceInput } from "@mesh/protocol";
import { silentLogger } from "../log";
import { Root } from "../resources/root";
import { MemoryStore } from "../store/memory-store";
import { OWNERSHIP_KEY, saveOwnership, type Ownership } from "../store/ownership";
import { providerFor } from "../resources/providers";
import { digestOf } from "../resources/observed";
import { reconcile } from "./reconcile";

const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));
let rootDir: string;
let store: MemoryStore;
beforeEach(() => {
  rootDir = mkdtempSync(join(tmpdir(), "mesh-rec-"));
  temps.push(rootDir);
  store = new MemoryStore();
});

const dir: ResourceInput = { type: "directory", id: "d", path: "/d", mode: "0755" };
const declared = (r: ResourceInput) => {
  const p = Declaration.parse({ version: 1, resources: [r] }).resources[0]!;
  return digestOf(providerFor(p.type).declared(p));
};
const run = (resources: ResourceInput[] | null, enrolled = true) =>
  reconcile(
    { store, root: new Root(rootDir), log: silentLogger(), enrolled },
    { declaration: resources ? Declaration.parse({ version: 1, resources }) : null },
  );
const intent = (existed: boolean, applied = declared(dir)): Ownership => ({
  format: 1,
  records: [{ id: "d", type: "directory", path: "/d", applied, pending: true, existed }],
});

describe("reconcile after a crash", () => {
  it("owns what an interrupted create made", async () => {
    await saveOwnership(store, intent(false));
    mkdirSync(join(rootDir, "d"), { mode: 0o700 });
    // Not declared any more: since the host made it, it is the host's to remove.
    const { report, changes } = await run([]);
    expect(changes.map((c) => c.kind)).toEqual(["removed"]);
    expect(existsSync(join(rootDir, "d"))).toBe(false);
    expect(report.owned).toEqual([]);
  });

  it("drops an intent whose create never happened", async () => {
    await saveOwnership(store, intent(false));
    const { report } = await run(null);
    expect(report.owned).toEqual([]);
    expect(JSON.parse((await store.read(OWNERSHIP_KEY))!.toString()).records).toEqual([]);
  });

  it("does not take over a path that stood there before and does not match", async () => {
    await saveOwnership(store, intent(true));
    mkdirSync(join(rootDir, "d"));
    chmodSync(join(rootDir, "d"), 0o700);
    writeFileSync(join(rootDir, "d", "x"), "x");
    const { report } = await run([]);
    expect(report.owned).toEqual([]);
    expect(existsSync(join(rootDir, "d", "x"))).toBe(true);
  });

  it("with no declaration held, only observes and reports", async () => {
    mkdirSync(join(rootDir, "d"));
    await saveOwnership(store, { format: 1, records: [{ id: "d", type: "directory", path: "/d", applied: declared(dir) }] });
    const { report, changes } = await run(null);
    expect(changes).toEqual([]);
    expect(report.declarationVersion).toBe(0);
    expect(report.owned.map((o) => o.id)).toEqual(["d"]);
  });
});

describe("store loss", () => {
  it("an enrolled host with a garbage store reports storeLost and applies again", async () => {
    await store.write(OWNERSHIP_KEY, "{ truncated");
    const { report } = await run([dir]);
    expect(report.storeLost).toBe(true);
    expect(report.owned.map((o) => o.id)).toEqual(["d"]);
    expect(store.keys().some((k) => k.startsWith("store.json.lost-"))).toBe(true);
    const cleared = await reconcile(
      { store, root: new Root(rootDir), log: silentLogger(), enrolled: true },
      { declaration: Declaration.parse({ version: 1, resources: [dir] }), clearLost: true },
    );
    expect(cleared.report.storeLost).toBe(false);
  });

  it("a host that is not enrolled starts with a fresh store, not a lost one", async () => {
    const { report } = await run([dir], false);
    expect(report.storeLost).toBe(false);
  });
});
