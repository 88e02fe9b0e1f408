// The report outbox: kept until acknowledged, across restarts and kill -9, bounded, and a
// damaged file costs its reports (said in the log), never the host.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Report } from "@mesh/protocol";
import { silentLogger } from "../log";
import { DiskStore } from "../store/disk-store";
import { MemoryStore } from "../store/memory-store";
import { KEYS } from "../state-dir/keys";
import { OUTBOX_BOUNDS, ReportOutbox } from "./outbox";
import { tempDirs } from "../testing/temp-dirs";

const freshDir = tempDirs("mesh-outbox-");
const diskStore = async () => {
  const dir = freshDir();
  const store = new DiskStore(join(dir, "state"));
  await store.init();
  return store;
};
const sha = "a".repeat(64);
const report = (driftIds: string[] = []): Report => ({
  declarationVersion: 1,
  owned: [],
  drift: driftIds.map((id) => ({ id, type: "file", declared: sha, observed: null, description: "missing", corrected: true })),
  errors: [],
  skipped: [],
  storeLost: false,
  reconciledAt: new Date().toISOString(),
});
const log = silentLogger();

describe("report outbox", () => {
  it("keeps reports until acknowledged, numbers them on across a restart, and sends them with an origin of its stream", async () => {
    const store = await diskStore();
    const outbox = await ReportOutbox.open(store, log);
    const first = await outbox.add(report(["motd"]));
    const second = await outbox.add(report());
    expect(first.origin).toEqual({ stream: outbox.stream, sequence: first.sequence });
    expect(second.sequence).toBe(first.sequence + 1);

    const reopened = await ReportOutbox.open(store, log);
    expect(reopened.stream).toBe(outbox.stream);
    expect(reopened.pending().map((p) => p.sequence)).toEqual([first.sequence, second.sequence]);
    await reopened.acknowledge(first.sequence);
    expect((await ReportOutbox.open(store, log)).pending().map((p) => p.sequence)).toEqual([second.sequence]);
    await reopened.acknowledge(second.sequence);
    const again = await ReportOutbox.open(store, log);
    expect(again.pending()).toEqual([]);
    expect((await again.add(report())).sequence).toBe(second.sequence + 1);
  });

  it("stays within its bounds however long nothing is acknowledged, the newest report always kept", async () => {
    const store = new MemoryStore();
    const outbox = await ReportOutbox.open(store, log);
    for (let i = 0; i < 200; i++) await outbox.add(report([`r${i}`]));
    const pending = outbox.pending();
    expect(pending.length).toBe(OUTBOX_BOUNDS.entries);
    expect(pending[pending.length - 1]!.sequence).toBe(199);
    // The oldest reports' drift is carried by the newest: every drift stays told.
    const told = new Set(pending.flatMap((p) => p.report.drift.map((d) => d.id)));
    expect(Array.from({ length: 200 }, (_, i) => `r${i}`).every((id) => told.has(id))).toBe(true);
    expect((await store.read(KEYS.reportOutbox))!.length).toBeLessThan(OUTBOX_BOUNDS.bytes);
  });

  it("sets a damaged outbox aside and starts a new stream", async () => {
    const store = await diskStore();
    const before = await ReportOutbox.open(store, log);
    await before.add(report(["x"]));
    writeFileSync(join(store.dir, KEYS.reportOutbox), '{"format":1,"stream":"zz');
    const after = await ReportOutbox.open(store, log);
    expect(after.pending()).toEqual([]);
    expect(after.stream).not.toBe(before.stream);
    expect(readFileSync(join(store.dir, `${KEYS.reportOutbox}.damaged`), "utf8")).toContain("zz");
  });

  it("sends a report it could not keep on disk without an origin (its number could come again after a crash)", async () => {
    const store = new MemoryStore();
    const outbox = await ReportOutbox.open(store, log);
    store.failNextWrite = new Error("ENOSPC: no space left on device");
    const unkept = await outbox.add(report(["a"]));
    expect(unkept.origin).toBeUndefined();
    const kept = await outbox.add(report(["b"]));
    expect(kept.origin?.sequence).toBe(kept.sequence);
    expect(outbox.pending().map((p) => p.origin === undefined)).toEqual([true, false]);
  });

  it("survives kill -9 at any moment: the file always reads back, and no sequence it handed out comes again", async () => {
    const store = await diskStore();
    let last = -1;
    for (let round = 0; round < 4; round++) {
      const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "outbox-writer.fixture.ts"), store.dir], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      const target = 20 + round * 7;
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", () => {
          if (out.split("\n").length > target) resolve();
        });
        child.once("exit", (code) => reject(new Error(`writer exited ${code}: ${err}`)));
      });
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await gone;
      const printed = out.trim().split("\n").map(Number);
      expect(printed[0]).toBe(last + 1);
      last = printed[printed.length - 1]!;
      const reopened = await ReportOutbox.open(store, log);
      const pending = reopened.pending().map((p) => p.sequence);
      // Everything it said was kept is there (no ack came), at most one more that was being written.
      expect(pending).toContain(last);
      expect(Math.max(...pending)).toBeLessThanOrEqual(last + 1);
      last = Math.max(...pending);
    }
    // Four cold starts of a TypeScript child: about 2 s each on a loaded machine, more than the default 15 s in all.
  }, 60_000);
});
