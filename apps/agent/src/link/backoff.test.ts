// Full-jitter backoff: bounded by base*2^n and the cap, reset to the base after
// a stable link, pinned at the cap for a revoked node.
import { describe, expect, it } from "vitest";
import { Backoff } from "./backoff";

describe("Backoff", () => {
  it("grows from 500 ms to the 30 s cap with full jitter", () => {
    const top = new Backoff({ random: () => 0.999999 });
    const ceilings = Array.from({ length: 9 }, () => top.next());
    expect(ceilings).toEqual([499, 999, 1999, 3999, 7999, 15999, 29999, 29999, 29999]);
    const low = new Backoff({ random: () => 0 });
    expect(low.next()).toBe(0);
  });

  it("resets to the base and pins to the cap", () => {
    const b = new Backoff({ random: () => 0.999999 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(499);
    b.pinToCap();
    expect(b.next()).toBe(29999);
  });
});
