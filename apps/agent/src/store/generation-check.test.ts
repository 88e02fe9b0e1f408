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
    expect(check.forSending(report(7), false, 0).storeGeneration).toBe(3);
    check.linkUp(0);
    expect(check.forSending(report(7), true, 0).storeGeneration).toBe(3);
    expect(check.forSending(report(7), true, 1).storeGeneration).toBe(3);
    expect(check.acknowledged(1, undefined, null)).toBe(false);
    expect(check.forSending(report(8), true, 2).storeGeneration).toBe(8);
    // A store read back older than the one this process wrote was replaced under it.
    expect(check.input().acknowledgedGeneration).toBe(7);
  });

  it("an ack naming a newer generation means this store was rolled back: taken as lost by the next reconcile, once", () => {
    const check = new GenerationCheck();
    check.reconciled(check.input(), { report: report(5), loadedGeneration: 5, lostNow: false });
    check.linkUp(-1);
    check.forSending(report(5), true, 1);
    expect(check.acknowledged(1, 9, null)).toBe(true);
    expect(check.acknowledged(2, 9, null)).toBe(false);
    // An ack without objection while rolled back accepts nothing.
    expect(check.acknowledged(3, undefined, null)).toBe(false);
    const told = check.input();
    expect(told).toEqual({ acknowledgedGeneration: 9, storeRolledBack: true });
    // The reconcile made a new store past 9, which says it was lost: sent as it is.
    check.reconciled(told, { report: report(10, true), loadedGeneration: 10, lostNow: true });
    expect(check.input().storeRolledBack).toBe(false);
    expect(check.forSending(report(10, true), true, 4).storeGeneration).toBe(10);
    // Reports sent before the store was found lost (seq below lostSeq) say nothing about the new one.
    expect(check.acknowledged(3, 9, 4)).toBe(false);
    expect(check.acknowledged(4, undefined, 4)).toBe(false);
    expect(check.forSending(report(11), true, 5).storeGeneration).toBe(11);
  });

  // A store restored to generation 3 while the control plane holds 7; offline reconciles wrote it up
  // to 8. The outbox still holds seq 20 of the process before (stored, its ack lost): the control plane
  // finds it stored by its origin and acks it without comparing its generation. Seq 21 was made
  // offline, 22 by the reconcile on link-up; all three go out carrying 3.
  it.each([
    { acks: [[20]], accepted: false, why: "the ack of a report of the process before (found stored by its origin) says nothing of this store" },
    { acks: [[20], [21]], accepted: false, why: "nor does one of a report that waited when the link came up (sent on an earlier link, maybe stored)" },
    { acks: [[20], [22]], accepted: true, why: "a report first sent on this link, acked without objection, accepts the store" },
    { acks: [[20], [22, 7]], accepted: false, why: "the control plane says it stored 7: rolled back" },
  ] as { acks: [number, number?][]; accepted: boolean; why: string }[])("a store rolled back before the link came up: $why", ({ acks, accepted }) => {
    const check = new GenerationCheck();
    check.reconciled(check.input(), { report: report(8), loadedGeneration: 3, lostNow: false });
    expect(check.forSending(report(7), false, 20).storeGeneration).toBe(3);
    expect(check.forSending(report(8), false, 21).storeGeneration).toBe(3);
    check.linkUp(21);
    for (const seq of [20, 21, 22]) expect(check.forSending(report(8), true, seq).storeGeneration).toBe(3);
    const rolledBack = acks.map(([seq, stored]) => check.acknowledged(seq, stored, null));
    expect(check.forSending(report(8), true, 23).storeGeneration).toBe(accepted ? 8 : 3);
    expect(check.input().storeRolledBack).toBe(acks.some(([, stored]) => stored !== undefined));
    expect(rolledBack.filter(Boolean)).toHaveLength(acks.filter(([, stored]) => stored !== undefined).length);
  });

  it("a report first sent on an earlier link, sent again on a new one, is not fresh there: only a later one's ack accepts", () => {
    const check = new GenerationCheck();
    check.reconciled(check.input(), { report: report(8), loadedGeneration: 3, lostNow: false });
    check.linkUp(-1);
    expect(check.forSending(report(8), true, 0).storeGeneration).toBe(3);
    // The link dropped before its ack (which may have objected); seq 0 is stored.
    check.linkUp(0);
    expect(check.forSending(report(8), true, 0).storeGeneration).toBe(3);
    expect(check.forSending(report(8), true, 1).storeGeneration).toBe(3);
    check.acknowledged(0, undefined, null);
    expect(check.forSending(report(8), true, 2).storeGeneration).toBe(3);
    check.acknowledged(2, undefined, null);
    expect(check.forSending(report(8), true, 3).storeGeneration).toBe(8);
  });

  it("accepts nothing before a link is up", () => {
    const check = new GenerationCheck();
    check.reconciled(check.input(), { report: report(8), loadedGeneration: 3, lostNow: false });
    expect(check.forSending(report(8), true, 0).storeGeneration).toBe(3);
    check.acknowledged(0, undefined, null);
    expect(check.forSending(report(8), true, 1).storeGeneration).toBe(3);
  });

  it("leaves a report without a generation as it is", () => {
    const check = new GenerationCheck();
    check.reconciled(check.input(), { report: report(2), loadedGeneration: 2, lostNow: false });
    const { storeGeneration: _g, ...old } = report(2);
    expect(check.forSending(old, true, 0)).toEqual(old);
  });
});
