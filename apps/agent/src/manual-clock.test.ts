import { describe, expect, it } from "vitest";
import { sleep } from "./sleep";
import { ManualClock } from "./manual-clock";

describe("ManualClock", () => {
  it("fires timers in order as time is advanced, a cleared one never, one armed by another when it falls due", () => {
    const clock = new ManualClock(0);
    const fired: [string, number][] = [];
    clock.setTimeout(() => fired.push(["b", clock.now()]), 20);
    const cleared = clock.setTimeout(() => fired.push(["never", clock.now()]), 5);
    clock.setTimeout(() => {
      fired.push(["a", clock.now()]);
      clock.setTimeout(() => fired.push(["a2", clock.now()]), 5);
    }, 10);
    clock.clearTimeout(cleared);
    clock.advance(14);
    expect(fired).toEqual([["a", 10]]);
    clock.advance(100);
    expect(fired).toEqual([
      ["a", 10],
      ["a2", 15],
      ["b", 20],
    ]);
    expect(clock.now()).toBe(114);
    expect(clock.pending).toBe(0);
  });

  it("drives sleep, and an abort ends a sleep at once", async () => {
    const clock = new ManualClock(0);
    let woke = false;
    const slept = sleep(1_000, { clock }).then(() => (woke = true));
    clock.advance(999);
    await Promise.resolve();
    expect(woke).toBe(false);
    clock.advance(1);
    await slept;
    const abort = new AbortController();
    const cut = sleep(60_000, { clock, signal: abort.signal });
    abort.abort();
    await cut;
    expect(clock.pending).toBe(0);
  });
});
