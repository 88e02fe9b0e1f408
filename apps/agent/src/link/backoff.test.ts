// Full-jitter backoff: bounded by base*2^n, by how long the failures have lasted and by the
// cap, reset to the base after a stable link, pinned at the cap for a revoked node.
import { describe, expect, it } from "vitest";
import { Backoff, LIVE_WINDOW_MS, jitteredRetryAfter, reconnectDelay, timedOutAgainstLiveServer } from "./backoff";
import { NoAnswerInTime } from "./control-plane-http";

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
    expect(reconnectDelay(b, {}, () => 0)).toBe(499);
    // Refused three times with "come back in 1 s": each time 1–2 s, not the backoff's growing window.
    for (let i = 0; i < 3; i++) expect(reconnectDelay(b, { retryAfterMs: 1000 }, () => 0.5)).toBe(1500);
    expect(reconnectDelay(b, { retryAfterMs: 5000 }, () => 0.5)).toBe(5625);
    // The backoff did not move while the server was answering: the next failure without a turn is the second step.
    expect(reconnectDelay(b, {}, () => 0)).toBe(999);
  });

  it("a timeout against a control plane that accepted the connection keeps a short window, and does not grow the backoff", () => {
    let t = 0;
    // A restart: the control plane has been away a minute, so the ordinary window has reached the cap.
    const b = new Backoff({ random: () => 0.999999, now: () => (t += 60_000) });
    for (let i = 0; i < 8; i++) b.next();
    expect(reconnectDelay(b, {}, () => 0)).toBe(29_999);
    // Its challenge timed out though the connection was accepted: the live window, time after time.
    for (let i = 0; i < 5; i++) expect(reconnectDelay(b, { liveServer: true })).toBe(LIVE_WINDOW_MS - 1);
    // A Retry-After still wins over both.
    expect(reconnectDelay(b, { retryAfterMs: 2000, liveServer: true }, () => 0)).toBe(2000);
    // A revoked host stays pinned at the cap whatever the failure.
    b.pinToCap();
    expect(reconnectDelay(b, { liveServer: true })).toBe(29_999);
  });

  it("tells a live control plane's timeout from an absent one", () => {
    expect(timedOutAgainstLiveServer(new NoAnswerInTime("cp:443", true), false)).toBe(true);
    expect(timedOutAgainstLiveServer(new NoAnswerInTime("cp:443", false), false)).toBe(false);
    // The upgrade timed out right after the challenge was answered: the control plane is there.
    expect(timedOutAgainstLiveServer(new Error("Opening handshake has timed out"), true)).toBe(true);
    expect(timedOutAgainstLiveServer(new Error("Opening handshake has timed out"), false)).toBe(false);
    expect(timedOutAgainstLiveServer(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }), true)).toBe(false);
  });
});
