// What survives when reports pile up unacknowledged: every drift and error told, the newest state.
import { describe, expect, it } from "vitest";
import type { Drift, Report } from "@mesh/protocol";
import { coalesce, type OutboxEntry } from "./coalesce";

const sha = (n: number) => n.toString(16).padStart(64, "0");
const drift = (id: string, corrected = true): Drift => ({ id, type: "file", declared: sha(1), observed: sha(2), description: "content differs", corrected });
const report = (over: Partial<Report> = {}): Report => ({
  declarationVersion: 1,
  owned: [],
  drift: [],
  errors: [],
  skipped: [],
  storeLost: false,
  reconciledAt: "2026-01-01T00:00:00.000Z",
  ...over,
});
const entry = (sequence: number, over: Partial<Report> = {}): OutboxEntry => ({ sequence, report: report(over) });
const wide = { entries: 32, bytes: 8 * 1024 * 1024 };

describe("coalesce", () => {
  const cases: { name: string; pending: OutboxEntry[]; added: OutboxEntry; kept: number[] }[] = [
    { name: "a plain state report gives way to the newer one", pending: [entry(1)], added: entry(2), kept: [2] },
    { name: "a report with corrected drift stays", pending: [entry(1, { drift: [drift("motd")] })], added: entry(2), kept: [1, 2] },
    { name: "a report with errors stays", pending: [entry(1, { errors: [{ id: "x", message: "boom" }] })], added: entry(2), kept: [1, 2] },
    {
      name: "one whose drift and errors the newer tells again gives way (drift that stays, errors that repeat)",
      pending: [entry(1, { drift: [drift("m", false)], errors: [{ id: "x", message: "boom" }] })],
      added: entry(2, { drift: [drift("m", false)], errors: [{ id: "x", message: "boom" }] }),
      kept: [2],
    },
    {
      name: "state between two drift reports goes, both drift reports stay",
      pending: [entry(1, { drift: [drift("a")] }), entry(2), entry(3, { drift: [drift("b")] })],
      added: entry(4),
      kept: [1, 3, 4],
    },
  ];
  it.each(cases)("$name", ({ pending, added, kept }) => {
    expect(coalesce(pending, added, wide).map((e) => e.sequence)).toEqual(kept);
  });

  it("past its bounds drops the oldest, and the newest carries their corrected drift (not their state)", () => {
    const pending = [
      entry(1, { drift: [drift("a"), drift("gone", false)], errors: [{ id: null, message: "old" }] }),
      entry(2, { drift: [drift("b")] }),
      entry(3, { drift: [drift("c")] }),
    ];
    const kept = coalesce(pending, entry(4, { drift: [drift("d")] }), { entries: 2, bytes: wide.bytes });
    expect(kept.map((e) => e.sequence)).toEqual([3, 4]);
    expect(kept[1]!.report.drift.map((d) => d.id)).toEqual(["a", "b", "d"]);
    expect(kept[1]!.report.errors).toEqual([]);
    expect(kept[1]!.report.drift.find((d) => d.id === "gone")).toBeUndefined();
  });

  it("keeps within a byte bound, the newest always", () => {
    const big = (n: number) => entry(n, { drift: Array.from({ length: 200 }, (_, i) => drift(`r${n}-${i}`)) });
    const bytes = JSON.stringify(big(0)).length * 3;
    let pending: OutboxEntry[] = [];
    for (let n = 0; n < 20; n++) pending = coalesce(pending, big(n), { entries: 32, bytes });
    expect(pending.length).toBeLessThanOrEqual(3);
    expect(pending[pending.length - 1]!.sequence).toBe(19);
  });
});
