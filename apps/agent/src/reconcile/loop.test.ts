// The loop: one reconcile at a time, triggers during a run coalesce into one more run, the timer
// triggers on its own, a failed run is tried again by the backoff (reset by one that did not fail),
// and a run past its deadline is aborted. Fake timers throughout: no test sleeps.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../log";
import { DeadlineExceeded, ReconcileLoop, reconcileTimingFromEnv, retryDelay, type RunResult, type Trigger } from "./loop";

beforeEach(() => vi.useFakeTimers({ now: new Date("2030-01-01T00:00:00Z") }));
afterEach(() => vi.useRealTimers());

/** A loop whose runs are scripted: each run takes the next outcome (the last one repeats). */
function scripted(outcomes: (RunResult | "throw")[], opts: { intervalMs?: number; deadlineMs?: number } = {}) {
  const runs: { at: number; triggers: Trigger[] }[] = [];
  const start = Date.now();
  const loop = new ReconcileLoop(
    async (triggers) => {
      runs.push({ at: Date.now() - start, triggers });
      const outcome = outcomes[Math.min(runs.length - 1, outcomes.length - 1)];
      if (outcome === "throw") throw new Error("disk full");
      return outcome;
    },
    {
      intervalMs: opts.intervalMs ?? 300_000,
      log: silentLogger(),
      retry: { baseMs: 1_000, capMs: 8_000 },
      deadlineMs: opts.deadlineMs ?? 60_000,
      // No jitter drawn: every delay is the low end of its window (half the ceiling).
      random: () => 0,
    },
  );
  return { loop, runs };
}

describe("ReconcileLoop", () => {
  it("runs one at a time and coalesces triggers that arrive during a run", async () => {
    const runs: Trigger[][] = [];
    let active = 0;
    let maxActive = 0;
    let release!: () => void;
    const loop = new ReconcileLoop(
      async (t) => {
        runs.push(t);
        active++;
        maxActive = Math.max(maxActive, active);
        if (runs.length === 1) await new Promise<void>((r) => (release = r));
        active--;
        return "ok";
      },
      { intervalMs: 60_000, log: silentLogger() },
    );
    loop.start();
    loop.trigger("declaration");
    loop.trigger("reconnect");
    loop.trigger("declaration");
    release();
    await loop.idle();
    expect(runs).toEqual([["start"], ["declaration", "reconnect"]]);
    expect(maxActive).toBe(1);
    await loop.stop();
  });

  it("the timer triggers a run every interval, and nothing between", async () => {
    const { loop, runs } = scripted(["ok"], { intervalMs: 20_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(19_999);
    expect(runs.map((r) => r.triggers)).toEqual([["start"]]);
    await vi.advanceTimersByTimeAsync(1 + 40_000);
    expect(runs).toEqual([
      { at: 0, triggers: ["start"] },
      { at: 20_000, triggers: ["timer"] },
      { at: 40_000, triggers: ["timer"] },
      { at: 60_000, triggers: ["timer"] },
    ]);
    await loop.stop();
    await vi.advanceTimersByTimeAsync(100_000);
    expect(runs).toHaveLength(4);
  });

  // Each row: the runs' outcomes in order (the last repeats), and when (ms after the start) each run
  // began in the first 61 s. Base 1 s, cap 8 s, no jitter drawn (each wait is half its ceiling); interval 60 s.
  it.each([
    { name: "a run that did not fail waits for the timer", outcomes: ["ok"], at: [0, 60_000] },
    { name: "a failed run is tried again after the base", outcomes: ["failed", "ok"], at: [0, 500, 60_000] },
    { name: "a run that throws failed too", outcomes: ["throw", "ok"], at: [0, 500, 60_000] },
    { name: "failures in a row double the wait", outcomes: ["failed", "failed", "failed", "ok"], at: [0, 500, 1_500, 3_500, 60_000] },
    {
      name: "the wait stops growing at the cap",
      outcomes: ["failed", "failed", "failed", "failed", "failed", "failed", "ok"],
      at: [0, 500, 1_500, 3_500, 7_500, 11_500, 15_500, 60_000],
    },
    { name: "a run with resource errors is tried again after the base", outcomes: ["errors", "ok"], at: [0, 500, 60_000] },
    {
      name: "a run that did not fail resets the backoff",
      // the third run succeeds; the timer's run fails, and its retry comes after the base again
      outcomes: ["failed", "failed", "ok", "failed", "ok"],
      at: [0, 500, 1_500, 60_000, 60_500],
    },
  ] as const)("$name", async ({ outcomes, at }) => {
    const { loop, runs } = scripted([...outcomes], { intervalMs: 60_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(60_999);
    expect(runs.map((r) => r.at)).toEqual(at);
    expect(runs.slice(1).every((r) => r.triggers.length === 1 && (r.triggers[0] === "retry" || r.triggers[0] === "timer"))).toBe(true);
    await loop.stop();
  });

  it("retries resource errors that stay until the backoff reaches the interval, then only the timer runs", async () => {
    // ceilings 1, 2, 4, 8 s, then past the 8-s cap for failed runs: 16, 32 s; 64 s reaches the 60-s interval,
    // after which the timer is the retry: one run an interval, never a retry beside it
    const { loop, runs } = scripted(["errors"], { intervalMs: 60_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(240_999);
    expect(runs.map((r) => r.at)).toEqual([0, 500, 1_500, 3_500, 7_500, 15_500, 31_500, 60_000, 120_000, 180_000, 240_000]);
    await loop.stop();
  });

  it("draws the delay in the upper half of its window", () => {
    const timing = { baseMs: 1_000, capMs: 300_000 };
    expect([1, 2, 3, 10, 30].map((n) => retryDelay(n, timing, () => 0))).toEqual([500, 1_000, 2_000, 150_000, 150_000]);
    expect([1, 2, 3, 10, 30].map((n) => retryDelay(n, timing, () => 0.999999))).toEqual([999, 1_999, 3_999, 299_999, 299_999]);
  });

  it("aborts a run past its deadline, counts it failed and tries again by the backoff", async () => {
    let reason: unknown = null;
    const started: number[] = [];
    const loop = new ReconcileLoop(
      async (_t, signal) => {
        started.push(Date.now());
        if (started.length > 1) return "ok";
        // A run that never ends by itself: it ends when its signal aborts.
        await new Promise<void>((_, reject) =>
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            reject(signal.reason);
          }),
        );
        return "ok";
      },
      { intervalMs: 3_600_000, log: silentLogger(), deadlineMs: 10_000, retry: { baseMs: 2_000, capMs: 8_000 }, random: () => 0 },
    );
    const t0 = Date.now();
    loop.start();
    await vi.advanceTimersByTimeAsync(9_999);
    expect(reason).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(reason).toBeInstanceOf(DeadlineExceeded);
    expect(String((reason as Error).message)).toBe("the reconcile ran past its deadline of 10 s and was aborted");
    expect(loop.failuresInARow).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(started.map((t) => t - t0)).toEqual([0, 11_000]);
    expect(loop.failuresInARow).toBe(0);
    await loop.stop();
  });

  it("a run that finishes in time is not aborted", async () => {
    let aborted = false;
    const loop = new ReconcileLoop(
      async (_t, signal) => {
        await new Promise((r) => setTimeout(r, 9_000));
        aborted = signal.aborted;
        return "ok";
      },
      { intervalMs: 3_600_000, log: silentLogger(), deadlineMs: 10_000 },
    );
    loop.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(aborted).toBe(false);
    expect(loop.failuresInARow).toBe(0);
    await loop.stop();
  });

  it("a failure outside a run is tried again once, not once per report of it", async () => {
    const { loop, runs } = scripted(["ok"]);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    loop.retryLater();
    loop.retryLater();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs.map((r) => [r.at, r.triggers])).toEqual([
      [0, ["start"]],
      [500, ["retry"]],
    ]);
    await loop.stop();
  });

  it("arms no retry once retries are held (the host stopping), and cancels the one pending", async () => {
    const { loop, runs } = scripted(["failed"]);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    loop.holdRetries();
    await vi.advanceTimersByTimeAsync(10_000);
    loop.trigger("declaration");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs.map((r) => [r.at, r.triggers])).toEqual([
      [0, ["start"]],
      [10_000, ["declaration"]],
    ]);
    await loop.stop();
  });

  it("stops retrying once stopped", async () => {
    const { loop, runs } = scripted(["failed"]);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    await loop.stop();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(runs).toHaveLength(1);
  });

  it("refuses a retry timing that makes no sense", () => {
    expect(() => new ReconcileLoop(async () => "ok", { intervalMs: 1000, log: silentLogger(), retry: { baseMs: 0, capMs: 10 } })).toThrow(/must be positive/);
    expect(() => new ReconcileLoop(async () => "ok", { intervalMs: 1000, log: silentLogger(), retry: { baseMs: 100, capMs: 10 } })).toThrow(
      /at least the base/,
    );
  });
});

describe("reconcileTimingFromEnv", () => {
  it.each([
    { env: {}, timing: { reconcileRetry: { baseMs: 1_000, capMs: 60_000 }, reconcileDeadlineMs: 3_600_000 } },
    {
      env: { MESH_RECONCILE_RETRY_BASE_MS: "200", MESH_RECONCILE_RETRY_CAP_MS: "5000", MESH_RECONCILE_DEADLINE_MS: "90000" },
      timing: { reconcileRetry: { baseMs: 200, capMs: 5_000 }, reconcileDeadlineMs: 90_000 },
    },
    // A base above the default cap lifts the cap with it.
    { env: { MESH_RECONCILE_RETRY_BASE_MS: "120000" }, timing: { reconcileRetry: { baseMs: 120_000, capMs: 120_000 }, reconcileDeadlineMs: 3_600_000 } },
    { env: { MESH_RECONCILE_DEADLINE_MS: " " }, timing: { reconcileRetry: { baseMs: 1_000, capMs: 60_000 }, reconcileDeadlineMs: 3_600_000 } },
  ])("reads $env", ({ env, timing }) => {
    expect(reconcileTimingFromEnv(env)).toEqual(timing);
  });

  it.each([
    [{ MESH_RECONCILE_DEADLINE_MS: "10m" }, "MESH_RECONCILE_DEADLINE_MS=10m: must be a whole number of milliseconds above 0"],
    [{ MESH_RECONCILE_RETRY_BASE_MS: "0" }, "MESH_RECONCILE_RETRY_BASE_MS=0: must be a whole number of milliseconds above 0"],
    [{ MESH_RECONCILE_RETRY_CAP_MS: "1.5" }, "MESH_RECONCILE_RETRY_CAP_MS=1.5: must be a whole number of milliseconds above 0"],
    [
      { MESH_RECONCILE_RETRY_BASE_MS: "5000", MESH_RECONCILE_RETRY_CAP_MS: "1000" },
      "MESH_RECONCILE_RETRY_CAP_MS=1000: must be at least MESH_RECONCILE_RETRY_BASE_MS (5000)",
    ],
  ])("refuses %o", (env, message) => {
    expect(() => reconcileTimingFromEnv(env)).toThrow(message);
  });
});
