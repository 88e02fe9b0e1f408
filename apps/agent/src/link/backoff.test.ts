// Full-jitter backoff: bounded by base*2^n, by how long the failures have lasted and by the
// cap, reset to the base after a stable link, pinned at the cap for a revoked node.
import { describe, expect, it } from "vitest";
import { Backoff, jitteredRetryAfter, reconnectDelay } from "./backoff";

describe("Backoff", () => {
  /** A clock that moves on by `stepMs` each time it is read. */
  const ticking = (stepMs: number) => {
    let t = 0;
    return () => (t += stepMs);
  };

  it("grows from 500 ms to the 30 s cap with full jitter", () => {
    // Failures a minute apart: only the doubling and the cap bound the window.
    const top = new Backoff({ random: () => 0.999999, now: ticking(60_000) });
    const ceilings = Array.from({ length: 9 }, () => top.next());
    expect(ceilings).toEqual([499, 999, 1999, 3999, 7999, 15999, 29999, 29999, 29999]);
    const low = new Backoff({ random: () => 0 });
    expect(low.next()).toBe(0);
  });

  it("never opens a window longer than the failures have lasted", () => {
    let t = 0;
    const b = new Backoff({ random: () => 0.999999, now: () => t });
    // A host sleeping its whole delay each time: the window follows the time away, not 2^n.
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const d = b.next();
      delays.push(d);
      t += d;
    }
    for (let i = 0, away = 0; i < delays.length; away += delays[i]!, i++) expect(delays[i]).toBeLessThan(Math.max(500, away));
    // Away ~8 s: the next window is ~8 s wide, where the doubling alone would be at 30 s.
    t = 8_000;
    expect(b.next()).toBeLessThan(8_000);
    // And a long outage still reaches the cap.
    t = 10 * 60_000;
    expect(b.next()).toBe(29_999);
  });

  it("resets to the base and pins to the cap", () => {
    const b = new Backoff({ random: () => 0.999999, now: ticking(60_000) });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(499);
    b.pinToCap();
    expect(b.next()).toBe(29999);
  });
});

describe("Retry-After jitter", () => {
  it("never comes back sooner than asked, and spreads hosts told the same wait over at least a second", () => {
    expect(jitteredRetryAfter(3000, () => 0)).toBe(3000);
    expect(jitteredRetryAfter(3000, () => 0.999999)).toBe(3999);
    // Longer waits spread by a quarter.
    expect(jitteredRetryAfter(20_000, () => 0.999999)).toBe(24_999);
    expect(jitteredRetryAfter(0, () => 0.5)).toBe(0);
    // A thousand hosts told "3 s": none before 3 s, none at 4 s or later, and not bunched.
    const perTenth = new Array(10).fill(0);
    for (let i = 0; i < 1000; i++) {
      const d = jitteredRetryAfter(3000);
      expect(d).toBeGreaterThanOrEqual(3000);
      expect(d).toBeLessThan(4000);
      perTenth[Math.floor((d - 3000) / 100)]++;
    }
    for (const n of perTenth) expect(n).toBeGreaterThan(40);
  });

  it("keeps the turn a Retry-After gave, without growing the backoff; without one, backs off", () => {
    let t = 0;
    const b = new Backoff({ random: () => 0.999999, now: () => (t += 60_000) });
    expect(reconnectDelay(b, undefined, () => 0)).toBe(499);
    // Refused three times with "come back in 1 s": each time 1–2 s, not the backoff's growing window.
    for (let i = 0; i < 3; i++) expect(reconnectDelay(b, 1000, () => 0.5)).toBe(1500);
    expect(reconnectDelay(b, 5000, () => 0.5)).toBe(5625);
    // The backoff did not move while the server was answering: the next failure without a turn is the second step.
    expect(reconnectDelay(b, undefined, () => 0)).toBe(999);
  });
});
