// What a host says about its store's generation, and when it takes its store as rolled back.
import { describe, expect, it } from "vitest";
import type { Report } from "@mesh/protocol";
import { GenerationCheck } from "./generation-check";

const report = (storeGeneration: number, storeLost = false): Report => ({
  declarationVersion: 1,
  owned: [],
  drift: [],
  errors: [],
  skipped: [],
  storeLost,
  storeGeneration,
  reconciledAt: new Date(0).toISOString(),
});

describe("GenerationCheck", () => {
  it("reports the generation it started from until the control plane accepts one, then the current one", () => {
    const check = new GenerationCheck();
    const told = check.input();
    expect(told).toEqual({ acknowledgedGeneration: 0, storeRolledBack: false });
    // Started on generation 3, wrote it up to 7 before the link came up.
    check.reconciled(told, { report: report(7), loadedGeneration: 3, lostNow: false });
    expect(check.forSending(report(7), false).storeGeneration).toBe(3);
    expect(check.forSending(report(7), true).storeGeneration).toBe(3);
    expect(check.acknowledged(1, undefined, null)).toBe(false);
    expect(check.forSending(report(8), true).storeGeneration).toBe(8);
    // A store read back older than the one this process wrote was replaced under it.
    expect(check.input().acknowledgedGeneration).toBe(7);
  });

  it("an ack naming a newer generation means this store was rolled back: taken as lost by the next reconcile, once", () => {
    const check = new GenerationCheck();
    check.reconciled(check.input(), { report: report(5), loadedGeneration: 5, lostNow: false });
    check.forSending(report(5), true);
    expect(check.acknowledged(1, 9, null)).toBe(true);
    expect(check.acknowledged(2, 9, null)).toBe(false);
    // An ack without objection while rolled back accepts nothing.
    expect(check.acknowledged(3, undefined, null)).toBe(false);
    const told = check.input();
    expect(told).toEqual({ acknowledgedGeneration: 9, storeRolledBack: true });
    // The reconcile made a new store past 9, which says it was lost: sent as it is.
    check.reconciled(told, { report: report(10, true), loadedGeneration: 10, lostNow: true });
    expect(check.input().storeRolledBack).toBe(false);
    expect(check.forSending(report(10, true), true).storeGeneration).toBe(10);
    // Reports sent before the store was found lost (seq below lostSeq) say nothing about the new one.
    expect(check.acknowledged(3, 9, 4)).toBe(false);
    expect(check.acknowledged(4, undefined, 4)).toBe(false);
    expect(check.forSending(report(11), true).storeGeneration).toBe(11);
  });

  it("leaves a report without a generation as it is", () => {
    const check = new GenerationCheck();
    check.reconciled(check.input(), { report: report(2), loadedGeneration: 2, lostNow: false });
    const { storeGeneration: _g, ...old } = report(2);
    expect(check.forSending(old, true)).toEqual(old);
  });
});
