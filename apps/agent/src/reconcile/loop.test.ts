// The loop: one reconcile at a time, triggers during a run coalesce into one
// more run, and the timer triggers on its own.
import { describe, expect, it } from "vitest";
import { silentLogger } from "../log";
import { ReconcileLoop, type Trigger } from "./loop";

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

  it("keeps going after a failed run, and the timer triggers runs", async () => {
    const runs: Trigger[][] = [];
    const loop = new ReconcileLoop(
      async (t) => {
        runs.push(t);
        if (runs.length === 1) throw new Error("disk full");
      },
      { intervalMs: 20, log: silentLogger() },
    );
    loop.start();
    await new Promise((r) => setTimeout(r, 90));
    await loop.stop();
    expect(runs[0]).toEqual(["start"]);
    expect(runs.slice(1).every((t) => t.length === 1 && t[0] === "timer")).toBe(true);
    expect(runs.length).toBeGreaterThanOrEqual(3);
  });
});
