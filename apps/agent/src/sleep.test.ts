// The one wait: ends at its time on the given clock (fake timers drive it), or at once when woken.
import { afterEach, describe, expect, it, vi } from "vitest";
import { sleep, wakeableSleep } from "./sleep";

afterEach(() => vi.useRealTimers());

describe("wakeableSleep", () => {
  it("ends when the time is up, not before", async () => {
    vi.useFakeTimers();
    let ended = false;
    void sleep(1000).then(() => (ended = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(ended).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended).toBe(true);
  });

  it("ends at once when woken, and clears its timer", async () => {
    vi.useFakeTimers();
    const pause = wakeableSleep(60_000);
    expect(vi.getTimerCount()).toBe(1);
    pause.wake();
    await pause.done;
    expect(vi.getTimerCount()).toBe(0);
    pause.wake(); // harmless after the end
  });

  it("waits on the clock it is given", async () => {
    const timers: [() => void, number][] = [];
    const clock = { now: () => 0, setTimeout: (fn: () => void, ms: number) => timers.push([fn, ms]), clearTimeout: () => undefined };
    let ended = false;
    void sleep(250, { clock }).then(() => (ended = true));
    expect(timers.map(([, ms]) => ms)).toEqual([250]);
    timers[0]![0]();
    await Promise.resolve();
    expect(ended).toBe(true);
  });

  it("does not wait when its signal is already aborted", async () => {
    vi.useFakeTimers();
    const abort = new AbortController();
    abort.abort();
    await sleep(60_000, { signal: abort.signal });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends when its signal aborts mid-sleep, and clears its timer", async () => {
    vi.useFakeTimers();
    const abort = new AbortController();
    let ended = false;
    void sleep(60_000, { signal: abort.signal }).then(() => (ended = true));
    await vi.advanceTimersByTimeAsync(10);
    expect(ended).toBe(false);
    abort.abort();
    await Promise.resolve();
    expect(ended).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("lets go of the signal once its time is up (one signal serves many sleeps)", async () => {
    vi.useFakeTimers();
    const abort = new AbortController();
    const remove = vi.spyOn(abort.signal, "removeEventListener");
    const pause = sleep(100, { signal: abort.signal });
    await vi.advanceTimersByTimeAsync(100);
    await pause;
    expect(remove).toHaveBeenCalledWith("abort", expect.any(Function));
  });
});
