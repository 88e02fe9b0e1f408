// FailureBackoff on a fake clock: only failures count, locks double and are
// bounded, keys are independent, and quiet keys are forgotten.
import { describe, expect, it } from "vitest";
import { FailureBackoff } from "./failure-backoff";

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("FailureBackoff", () => {
  it("allows the free failures, then locks for 1, 2, 4 ... seconds up to the bound", () => {
    const c = clock();
    const b = new FailureBackoff({ freeFailures: 3, baseDelayMs: 1000, maxDelayMs: 8000, now: c.now });
    for (let i = 0; i < 3; i++) expect(b.attempt("k")).toEqual({ allowed: true });
    // The fourth failure is allowed but locks the key for 1 s.
    expect(b.attempt("k").allowed).toBe(true);
    expect(b.attempt("k")).toEqual({ allowed: false, retryAfterMs: 1000 });
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const refused = b.attempt("k");
      if (refused.allowed) throw new Error("expected a lock");
      waits.push(refused.retryAfterMs);
      c.advance(refused.retryAfterMs);
      expect(b.attempt("k").allowed).toBe(true);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it("does not count refused attempts, so hammering a locked key does not lengthen the lock", () => {
    const c = clock();
    const b = new FailureBackoff({ freeFailures: 1, baseDelayMs: 1000, now: c.now });
    b.attempt("k");
    b.attempt("k");
    for (let i = 0; i < 100; i++) expect(b.attempt("k").allowed).toBe(false);
    expect(b.failures("k")).toBe(2);
    c.advance(1000);
    expect(b.attempt("k").allowed).toBe(true);
  });

  it("forgets a key after a success, so successes never count", () => {
    const c = clock();
    const b = new FailureBackoff({ freeFailures: 2, now: c.now });
    for (let i = 0; i < 50; i++) {
      expect(b.attempt("k").allowed).toBe(true);
      b.succeeded("k");
    }
    expect(b.failures("k")).toBe(0);
  });

  it("keeps earlier failures when a shared key is forgiven one success", () => {
    const c = clock();
    const b = new FailureBackoff({ freeFailures: 3, now: c.now });
    b.attempt("addr");
    b.attempt("addr");
    b.attempt("addr");
    b.forgive("addr");
    expect(b.failures("addr")).toBe(2);
    b.attempt("addr");
    b.attempt("addr"); // the fourth failure: locked
    expect(b.attempt("addr").allowed).toBe(false);
  });

  it("locks one key without touching another", () => {
    const c = clock();
    const b = new FailureBackoff({ freeFailures: 1, now: c.now });
    b.attempt("admin|attacker");
    b.attempt("admin|attacker");
    expect(b.attempt("admin|attacker").allowed).toBe(false);
    expect(b.attempt("admin|office").allowed).toBe(true);
  });

  it("starts a quiet key again from nothing, and holds at most maxKeys keys", () => {
    const c = clock();
    const b = new FailureBackoff({ freeFailures: 1, baseDelayMs: 1000, maxDelayMs: 2000, forgetAfterMs: 10_000, maxKeys: 100, now: c.now });
    b.attempt("k");
    b.attempt("k");
    c.advance(10_000);
    expect(b.failures("k")).toBe(0);
    expect(b.attempt("k").allowed).toBe(true);
    for (let i = 0; i < 1000; i++) b.attempt(`spray-${i}`);
    expect(b.failures("spray-0")).toBe(0);
    expect(b.failures("spray-999")).toBe(1);
  });
});
