// The host's truth about its own state (issue 12): a store rolled back to an older copy is a
// lost store, and a write of its own state that fails (a full disk) is an error it reports and retries.
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Host } from "./host";
import { testHost } from "./testing/test-host";
import { startControlPlane, type FakeControlPlane } from "./link/fake-control-plane";
import { waitFor } from "./testing/wait-for";
import { DiskStore } from "./store/disk-store";
import { MemoryStore } from "./store/memory-store";
import type { Store } from "./store/store";
import type { Declaration } from "@mesh/protocol";
import { saveHeldDeclaration } from "./state-dir/held-declaration";
import { OWNERSHIP_KEY, emptyOwnership, saveOwnership } from "./store/ownership";
import { cleanupsAfterEach } from "./testing/cleanups";

const cleanups = cleanupsAfterEach();

const frame = (version: number, resources: unknown[]) => JSON.stringify({ type: "declaration", declaration: { version, resources } });
const file = (id: string) => ({ type: "file", id, path: `/${id}`, content: `${id}\n` });

/** As enrolment leaves it: an empty store, so that a missing one reads as lost. */
async function enrolledStore<S extends Store>(store: S): Promise<S> {
  if (!(await store.read(OWNERSHIP_KEY))) await saveOwnership(store, emptyOwnership());
  return store;
}

function startHost(cp: FakeControlPlane, store: Store, rootDir: string, privateKey: KeyObject, intervalMs = 60_000): Host {
  const host = testHost({ controlPlaneUrl: cp.url, store, rootDir, privateKey, intervalMs });
  cleanups.push(() => host.stop());
  return host;
}

function tempDir(): string {
  const base = mkdtempSync(join(tmpdir(), "mesh-host-state-"));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  return base;
}

/** A fake control plane that pushes v1 (one file) to every link, a host key, and a root dir for the host. */
async function pushingV1() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const cp = await startControlPlane(publicKey, (ws) => ws.send(frame(1, [file("a")])));
  cleanups.push(() => cp.close());
  const base = tempDir();
  const rootDir = join(base, "root");
  mkdirSync(rootDir);
  return { cp, privateKey, base, rootDir };
}

describe("host: a store rolled back to an older copy", () => {
  it("is a lost store: kept aside, reported as lost, and its generation passes the acknowledged one", async () => {
    const { cp, privateKey, base, rootDir } = await pushingV1();
    const stateDir = join(base, "state");
    const store = new DiskStore(stateDir);
    await store.init();
    await enrolledStore(store);
    const first = startHost(cp, store, rootDir, privateKey);
    await first.start();
    await waitFor("v1 applied", () => cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1 && !r.storeLost));
    const backup = readFileSync(join(stateDir, "store.json"));
    cp.sockets.at(-1)!.send(frame(2, [file("a"), file("b")]));
    await waitFor("v2 applied", () => cp.reports.find((r) => r.declarationVersion === 2 && r.owned.length === 2));
    await first.stop();
    const acknowledged = cp.storeGeneration;
    expect(acknowledged).toBeGreaterThan(JSON.parse(backup.toString()).generation);

    // An operator restores last week's backup of the state dir's store; the host starts while its
    // control plane is away, and its first reconciles write the old store up to the acknowledged generation.
    writeFileSync(join(stateDir, "store.json"), backup);
    cp.refuse = "unavailable";
    const before = cp.reports.length;
    const second = startHost(cp, store, rootDir, privateKey, 100);
    await second.start();
    // Drift corrected offline: more writes of the old store, until its generation reaches the acknowledged one.
    const generation = () => JSON.parse(readFileSync(join(stateDir, "store.json"), "utf8")).generation as number;
    while (generation() < acknowledged) {
      const was = generation();
      writeFileSync(join(rootDir, "a"), "changed by hand\n");
      await waitFor("the drift corrected", () => generation() > was && readFileSync(join(rootDir, "a"), "utf8") === "a\n");
    }
    cp.refuse = null;
    const lost = await waitFor("a report saying the store was lost", () => cp.reports.slice(before).find((r) => r.storeLost));
    expect(lost.storeGeneration).toBeGreaterThan(acknowledged);
    expect(readdirSync(stateDir).filter((n) => n.startsWith("store.json.rolled-back-"))).toHaveLength(1);
    // It re-applies (adopting what it finds): owned is the truth again.
    await waitFor("owned again", () => cp.reports.slice(before).find((r) => r.storeLost && r.owned.length === 2));
  });

  it("is noticed by a running host when store.json is replaced under it", async () => {
    const { cp, privateKey, rootDir } = await pushingV1();
    const store = await enrolledStore(new MemoryStore());
    const host = startHost(cp, store, rootDir, privateKey);
    await host.start();
    await waitFor("v1 applied", () => cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1 && !r.storeLost));
    const backup = (await store.read("store.json"))!;
    cp.sockets.at(-1)!.send(frame(2, [file("a"), file("b")]));
    await waitFor("v2 applied", () => cp.reports.find((r) => r.declarationVersion === 2 && r.owned.length === 2));
    await host.idle();
    await store.write("store.json", backup);
    const before = cp.reports.length;
    // v3 drops b: the old store never listed it, so it would be "removed" without a word.
    cp.sockets.at(-1)!.send(frame(3, [file("a")]));
    const report = await waitFor("the v3 report", () => cp.reports.slice(before).find((r) => r.declarationVersion === 3));
    expect(report.storeLost).toBe(true);
    expect(store.keys().some((k) => k.startsWith("store.json.rolled-back-"))).toBe(true);
  });
});

describe("host: a full state dir", () => {
  it("says a declaration it cannot keep is not applied, retries, and applies it once space returns", async () => {
    const { cp, privateKey, rootDir } = await pushingV1();
    const store = await enrolledStore(new MemoryStore());
    const host = startHost(cp, store, rootDir, privateKey);
    await host.start();
    await waitFor("v1 applied", () => cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1 && r.errors.length === 0));
    await host.idle();

    store.full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const before = cp.reports.length;
    cp.sockets.at(-1)!.send(frame(2, [file("a"), file("b")]));
    const refused = await waitFor("a report with the error", () => cp.reports.slice(before).find((r) => r.errors.length > 0));
    expect(refused.declarationVersion).toBe(1);
    expect(refused.errors).toContainEqual({ id: null, message: expect.stringMatching(/cannot keep declaration v2 \(ENOSPC: no space left on device/) });
    expect(existsSync(join(rootDir, "b"))).toBe(false);

    // Space returns: no new push, no restart; the host recovers by itself.
    store.full = null;
    // Every failed write is retried (the status file too) until a report says all is well again.
    await waitFor(
      "v2 applied, without errors",
      () => cp.reports.find((r) => r.declarationVersion === 2 && r.owned.length === 2 && r.errors.length === 0),
      10_000,
    );
    expect(readFileSync(join(rootDir, "b"), "utf8")).toBe("b\n");
  });

  it("reports a reconcile that cannot write its store instead of staying silent", async () => {
    const { cp, privateKey, rootDir } = await pushingV1();
    const store = await enrolledStore(new MemoryStore());
    await saveHeldDeclaration(store, { version: 1, resources: [file("a")] } as Declaration);
    // The store can be read, but nothing can be written: the held declaration's apply cannot record its intents.
    store.full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const host = startHost(cp, store, rootDir, privateKey);
    await host.start();
    const failed = await waitFor("a report of the failure", () => cp.reports.find((r) => r.errors.some((e) => /reconcile failed/.test(e.message))));
    expect(failed.errors[0]!.message).toMatch(/ENOSPC/);
    store.full = null;
    await waitFor("v1 applied", () => cp.reports.find((r) => r.declarationVersion === 1 && r.owned.length === 1 && r.errors.length === 0), 10_000);
  });
});
