// One conformance suite over every Store (disk and memory), plus the ownership
// file on top: a truncated or garbage store.json is treated as lost, never a crash.
import { promises as fs, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DiskStore } from "./disk-store";
import { OWNERSHIP_KEY, loadOwnership, saveOwnership, type Ownership } from "./ownership";
import { tempDirs } from "../testing/temp-dirs";
import { storeKinds } from "../testing/store-kinds";

const freshDir = tempDirs("mesh-store-");

const kinds = storeKinds(freshDir);

const sample: Ownership = {
  format: 2,
  records: [
    { id: "site", type: "directory", subject: "path:/srv/site", applied: "a".repeat(64) },
    {
      id: "motd",
      type: "file",
      subject: "path:/etc/motd",
      applied: "b".repeat(64),
      after: ["site"],
      adopted: { original: { kind: "file", blob: "c".repeat(64), mode: "0644", uid: 0, gid: 0 }, digest: "d".repeat(64) },
      intent: { op: "adopt", want: { type: "file", path: "/etc/motd", mode: "0600", sha256: "e".repeat(64) } },
    },
    {
      id: "curl",
      type: "package",
      subject: "package:curl",
      applied: "f".repeat(64),
      adopted: { original: { kind: "opaque", data: { version: null } }, digest: "0".repeat(64) },
    },
  ],
};

describe.each(kinds)("%s store", (_kind, make) => {
  it("reads null for a key never written", async () => {
    const store = await make();
    expect(await store.read("nothing.json")).toBeNull();
  });

  it("reads back what it wrote, and the last write wins", async () => {
    const store = await make();
    await store.write("a.json", "one");
    expect((await store.read("a.json"))?.toString()).toBe("one");
    await store.write("a.json", Buffer.from("two"));
    expect((await store.read("a.json"))?.toString()).toBe("two");
  });

  it("sets a key aside and removes keys; both are no-ops when absent", async () => {
    const store = await make();
    await store.write("a.json", "one");
    await store.setAside("a.json", "a.json.lost-1");
    expect(await store.read("a.json")).toBeNull();
    expect((await store.read("a.json.lost-1"))?.toString()).toBe("one");
    await store.setAside("missing", "missing.lost");
    await store.remove("a.json.lost-1");
    await store.remove("a.json.lost-1");
    expect(await store.read("a.json.lost-1")).toBeNull();
  });

  it("refuses keys that could leave the state dir", async () => {
    const store = await make();
    await expect(store.write("../escape", "x")).rejects.toThrow(/invalid store key/);
    await expect(store.read("a/b")).rejects.toThrow(/invalid store key/);
  });

  it("ownership: fresh when missing and not enrolled", async () => {
    const store = await make();
    const loaded = await loadOwnership(store, { enrolled: false });
    expect(loaded.lostNow).toBe(false);
    expect(loaded.ownership.records).toEqual([]);
  });

  it("ownership: round-trips", async () => {
    const store = await make();
    await saveOwnership(store, sample);
    const loaded = await loadOwnership(store, { enrolled: true });
    expect(loaded).toMatchObject({ lostNow: false, ownership: sample });
  });

  it("ownership: round-trips a record of every kind of subject, the host's own included", async () => {
    // A store holding the host resource was once unreadable: every self-upgraded host reported its store lost.
    const store = await make();
    const applied = "a".repeat(64);
    const every = {
      format: 2 as const,
      records: [
        { id: "f", type: "file" as const, subject: "path:/etc/x", applied },
        { id: "p", type: "package" as const, subject: "package:curl", applied },
        { id: "s", type: "service" as const, subject: "service:x.service", applied },
        { id: "mesh-host", type: "host" as const, subject: "host:mesh-host", applied },
      ],
    };
    await saveOwnership(store, every);
    expect(await loadOwnership(store, { enrolled: true })).toMatchObject({ lostNow: false, ownership: every });
  });

  it("ownership: missing while enrolled is lost", async () => {
    const store = await make();
    const loaded = await loadOwnership(store, { enrolled: true });
    expect(loaded.lostNow).toBe(true);
    expect(loaded.ownership.lostAt).toBeDefined();
    // Lost once: the next load reads the fresh store and still says so until cleared.
    const again = await loadOwnership(store, { enrolled: true });
    expect(again.lostNow).toBe(false);
    expect(again.ownership.lostAt).toBe(loaded.ownership.lostAt);
  });

  it("ownership: every write bumps the generation; a store older than the one acknowledged is rolled back, so lost", async () => {
    const store = await make();
    const ownership: Ownership = { format: 2, records: [] };
    await saveOwnership(store, ownership);
    const backup = (await store.read(OWNERSHIP_KEY))!;
    await saveOwnership(store, ownership);
    await saveOwnership(store, ownership);
    expect(ownership.generation).toBe(3);
    expect(await loadOwnership(store, { enrolled: true, acknowledged: 3 })).toMatchObject({ lostNow: false, ownership: { generation: 3 } });
    // A restored backup (generation 1) while generation 3 was acknowledged.
    await store.write(OWNERSHIP_KEY, backup);
    const loaded = await loadOwnership(store, { enrolled: true, acknowledged: 3 });
    expect(loaded).toMatchObject({ lostNow: true, rolledBack: { found: 1, acknowledged: 3 }, keptAs: expect.stringMatching(/^store\.json\.rolled-back-/) });
    expect(loaded.ownership).toMatchObject({ records: [], lostAt: expect.any(String) });
    expect(loaded.ownership.generation).toBeGreaterThan(3);
    expect(await store.read(loaded.keptAs!)).toEqual(backup);
    // The control plane can say so whatever the generation now (writes since the start caught it up).
    const current = await make();
    await saveOwnership(current, { format: 2, records: [] });
    const forced = await loadOwnership(current, { enrolled: true, acknowledged: 1, rolledBack: true });
    expect(forced).toMatchObject({ lostNow: true, rolledBack: { found: 1, acknowledged: 1 } });
  });

  it("ownership: reads the first format and keeps its records", async () => {
    const store = await make();
    const applied = "a".repeat(64);
    await store.write(
      OWNERSHIP_KEY,
      JSON.stringify({
        format: 1,
        records: [
          { id: "d", type: "directory", path: "/d", applied },
          { id: "f", type: "file", path: "/d/f", applied, pending: true, existed: false },
          { id: "g", type: "file", path: "/d/g", applied, pending: true, existed: true },
        ],
      }),
    );
    const loaded = await loadOwnership(store, { enrolled: true });
    expect(loaded.lostNow).toBe(false);
    expect(loaded.ownership.records).toEqual([
      { id: "d", type: "directory", subject: "path:/d", applied },
      { id: "f", type: "file", subject: "path:/d/f", applied, intent: { op: "create" } },
    ]);
  });

  it("keeps original contents under originals/", async () => {
    const store = await make();
    await store.write("originals/" + "a".repeat(64), "before");
    expect((await store.read("originals/" + "a".repeat(64)))?.toString()).toBe("before");
    await store.remove("originals/" + "a".repeat(64));
    expect(await store.read("originals/" + "a".repeat(64))).toBeNull();
    await expect(store.write("originals/../x", "x")).rejects.toThrow(/invalid store key/);
  });

  for (const [name, bytes] of [
    ["empty", ""],
    ["truncated", JSON.stringify(sample).slice(0, 30)],
    ["garbage", "\u0000\u0001 not json at all"],
    ["the wrong shape", JSON.stringify({ format: 1, records: [{ id: "x" }] })],
  ] as const) {
    it(`ownership: a ${name} store is lost and kept aside, not a crash`, async () => {
      const store = await make();
      await store.write(OWNERSHIP_KEY, bytes);
      const now = new Date("2030-01-02T03:04:05.678Z");
      const loaded = await loadOwnership(store, { enrolled: true, now });
      expect(loaded.lostNow).toBe(true);
      expect(loaded.ownership.records).toEqual([]);
      expect(loaded.keptAs).toBe("store.json.lost-20300102T030405678Z");
      expect((await store.read(loaded.keptAs!))?.toString()).toBe(bytes);
      const reread = await loadOwnership(store, { enrolled: true });
      expect(reread.lostNow).toBe(false);
      expect(reread.ownership.lostAt).toBe(now.toISOString());
    });
  }
});

describe("disk store on disk", () => {
  it("writes with the mode asked for and leaves no temp files", async () => {
    const dir = freshDir();
    const store = new DiskStore(dir);
    await store.write("node.key", "secret", { mode: 0o600 });
    await store.write("status.json", "{}", { mode: 0o644 });
    expect(statSync(join(dir, "node.key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "status.json")).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir).sort()).toEqual(["node.key", "status.json"]);
  });

  it("a failed write leaves the old file whole", async () => {
    const dir = freshDir();
    const store = new DiskStore(dir);
    await store.write("a.json", "old");
    // A directory in the way of the rename makes the write fail after the temp file exists.
    await fs.mkdir(join(dir, "b.json"));
    await expect(store.write("b.json", "new")).rejects.toThrow();
    expect((await store.read("a.json"))?.toString()).toBe("old");
    expect(readdirSync(dir).sort()).toEqual(["a.json", "b.json"]);
  });
});
