import { describe, expect, it } from "vitest";
import { KeyBatcher } from "./key-batcher";

describe("KeyBatcher", () => {
  it("answers keys asked together with one call, duplicates sharing one answer", async () => {
    const calls: number[][] = [];
    const b = new KeyBatcher<number, string>(async (keys) => {
      calls.push(keys);
      return new Map(keys.filter((k) => k !== 3).map((k) => [k, `v${k}`]));
    });
    const answers = await Promise.all([1, 2, 3, 2].map((k) => b.load(k)));
    expect(answers).toEqual(["v1", "v2", undefined, "v2"]);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  it("sends a full batch at once and keeps later keys for the next", async () => {
    const calls: number[][] = [];
    const b = new KeyBatcher<number, number>(async (keys) => (calls.push(keys), new Map(keys.map((k) => [k, k * 2]))), { maxKeys: 2, windowMs: 1000 });
    const first = [b.load(1), b.load(2)];
    expect(await Promise.all(first)).toEqual([2, 4]);
    const third = b.load(3);
    // Not full: waits for its window (1 s), so nothing was sent yet.
    expect(calls).toEqual([[1, 2]]);
    expect(await third).toBe(6);
    expect(calls).toEqual([[1, 2], [3]]);
  });

  it("with no window, sends the keys asked in one turn of the event loop together, and a key asked alone without waiting for a timer", async () => {
    const calls: number[][] = [];
    const b = new KeyBatcher<number, number>(async (keys) => (calls.push(keys), new Map(keys.map((k) => [k, k]))), { windowMs: 0 });
    const timerFired = new Promise<string>((r) => setTimeout(() => r("timer"), 1));
    // Sent before a 1 ms timer fires: the batch left on setImmediate, not on a timeout.
    expect(await Promise.race([Promise.all([b.load(1), b.load(2)]).then(() => "batch"), timerFired])).toBe("batch");
    expect(await b.load(3)).toBe(3);
    expect(calls).toEqual([[1, 2], [3]]);
  });

  it("rejects every waiter of a batch whose call failed, and goes on", async () => {
    let fail = true;
    const b = new KeyBatcher<number, number>(async (keys) => {
      if (fail) throw new Error("database down");
      return new Map(keys.map((k) => [k, k]));
    });
    await expect(Promise.all([b.load(1), b.load(2)])).rejects.toThrow("database down");
    fail = false;
    expect(await b.load(1)).toBe(1);
  });
});

describe("KeyBatcher under load", () => {
  it("runs at most maxInFlight calls; keys asked meanwhile go together when one lands", async () => {
    const calls: number[][] = [];
    const release: Array<() => void> = [];
    const b = new KeyBatcher<number, number>(
      (keys) => {
        calls.push(keys);
        return new Promise((resolve) => release.push(() => resolve(new Map(keys.map((k) => [k, k])))));
      },
      { windowMs: 0, maxInFlight: 1 },
    );
    const first = b.load(1);
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toEqual([[1]]);
    // Asked while the first call runs: nothing is sent until it lands, then all go as one.
    const later = [2, 3, 4, 5].map((k) => b.load(k));
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toEqual([[1]]);
    release.shift()!();
    expect(await first).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect(calls).toEqual([[1], [2, 3, 4, 5]]);
    release.shift()!();
    expect(await Promise.all(later)).toEqual([2, 3, 4, 5]);
  });

  it("splits what waited into batches of maxKeys, one after another", async () => {
    const calls: number[][] = [];
    let hold = true;
    const waiting: Array<() => void> = [];
    const b = new KeyBatcher<number, number>(
      async (keys) => {
        calls.push(keys);
        if (hold) await new Promise<void>((r) => waiting.push(r));
        return new Map(keys.map((k) => [k, k]));
      },
      { windowMs: 0, maxKeys: 2, maxInFlight: 1 },
    );
    const all = [1, 2, 3, 4, 5].map((k) => b.load(k));
    await new Promise((r) => setTimeout(r, 5));
    expect(calls).toEqual([[1, 2]]);
    hold = false;
    waiting.shift()!();
    expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5]);
    expect(calls).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("a call that throws synchronously rejects its waiters and frees its flight", async () => {
    let fail = true;
    const b = new KeyBatcher<number, number>(
      (keys) => {
        if (fail) throw new Error("bad");
        return Promise.resolve(new Map(keys.map((k) => [k, k])));
      },
      { maxInFlight: 1 },
    );
    await expect(b.load(1)).rejects.toThrow("bad");
    fail = false;
    expect(await b.load(2)).toBe(2);
  });
});
