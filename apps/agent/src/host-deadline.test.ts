// The host's reconcile under the loop's deadline and backoff (fake timers, no link): a run past its
// deadline is aborted and reported as failed with the reason, and tried again by the backoff, not the interval.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Host } from "./host";
import { silentLogger } from "./log";
import { Root } from "./resources/root";
import { KEYS } from "./state-dir/keys";
import { MemoryStore } from "./store/memory-store";
import { OWNERSHIP_KEY, emptyOwnership, saveOwnership } from "./store/ownership";

/** A store whose reads of store.json take `slowMs` on the clock while `slowMs` is set (a state dir on a hung disk). */
class SlowStore extends MemoryStore {
  slowMs = 0;
  override async read(key: string): Promise<Buffer | null> {
    if (key === OWNERSHIP_KEY && this.slowMs) await new Promise((r) => setTimeout(r, this.slowMs));
    return super.read(key);
  }
}

let base = "";
beforeEach(() => {
  vi.useFakeTimers({ now: new Date("2030-01-01T00:00:00Z") });
  base = mkdtempSync(join(tmpdir(), "mesh-deadline-"));
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(base, { recursive: true, force: true });
});

async function status(store: MemoryStore) {
  return JSON.parse(String(await store.read(KEYS.status)));
}

describe("host: a reconcile past its deadline", () => {
  it("is aborted, reported as failed with the reason, and tried again by the backoff", async () => {
    const store = new SlowStore();
    await saveOwnership(store, emptyOwnership());
    store.slowMs = 5_000;
    const host = new Host({
      store,
      root: new Root(base),
      identity: null,
      privateKey: null,
      damaged: "no identity in this test",
      intervalMs: 3_600_000,
      linkTimeoutMs: 45_000,
      hostVersion: "test",
      log: silentLogger(),
      driftWatch: false,
      reconcileRetry: { baseMs: 2_000, capMs: 10_000 },
      reconcileDeadlineMs: 1_000,
    });
    await host.start();
    await vi.advanceTimersByTimeAsync(999);
    expect((await store.read(KEYS.status)) === null || (await status(store)).lastReconcileResult !== "failed").toBe(true);
    // The deadline aborts the run; it ends at its next step (the slow read returns at 5 s).
    store.slowMs = 0;
    await vi.advanceTimersByTimeAsync(4_001);
    expect(await status(store)).toMatchObject({ lastReconcileResult: "failed" });
    const outbox = String(await store.read(KEYS.reportOutbox));
    expect(outbox).toContain("reconcile failed (owned and drift are as last observed): the reconcile ran past its deadline of 1 s and was aborted");
    // Tried again by the backoff (base 2 s: within [1 s, 2 s) of the failure), not at the hour's interval.
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await status(store)).toMatchObject({ lastReconcileResult: "ok" });
    await host.stop();
  });
});
