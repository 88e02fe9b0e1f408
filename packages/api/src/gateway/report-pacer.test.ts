import { describe, expect, it } from "vitest";
import type { ReportFrame } from "@mesh/protocol";
import { createReportPacer } from "./report-pacer";
import { testReport } from "../testing/host-facts";

const frame = (seq: number, tag: string): ReportFrame => ({
  type: "report",
  seq,
  report: testReport(1, { errors: [{ id: null, message: tag }], reconciledAt: "2026-01-01T00:00:00Z" }),
});
const hash = (f: ReportFrame) => f.report.errors[0]!.message;

describe("report pacer", () => {
  it("writes a changed report at once, skips an unchanged one, and holds the latest of a burst until its window opens", () => {
    let now = 1_000_000;
    const released: number[] = [];
    const pacer = createReportPacer({ intervalMs: 2000, hash, release: (_n, f) => released.push(f.seq), now: () => now });
    expect(pacer.offer("n", frame(1, "a"))).toBe("now");
    expect(pacer.offer("n", frame(2, "a"))).toBe("unchanged");
    expect(pacer.offer("n", frame(3, "b"))).toBe("later");
    expect(pacer.offer("n", frame(4, "c"))).toBe("later");
    expect(pacer.offer("other", frame(1, "x"))).toBe("now");
    now += 2000;
    pacer.flush("n");
    expect(released).toEqual([4]);
    expect(pacer.offer("n", frame(5, "c"))).toBe("unchanged");
    expect(pacer.offer("n", frame(6, "d"))).toBe("later");
    pacer.flushAll();
    expect(released).toEqual([4, 6]);
  });

  it("hands the drift of a replaced report on to the one that replaces it", () => {
    let now = 0;
    const carried: string[][] = [];
    const pacer = createReportPacer({ intervalMs: 2000, hash, release: (_n, _f, drift) => carried.push(drift.map((d) => d.drift.id)), now: () => now });
    const drifted = frame(2, "b");
    drifted.report.drift = [{ id: "motd", type: "file", declared: "a".repeat(64), observed: null, description: "missing", corrected: true }];
    expect(pacer.offer("n", frame(1, "a"))).toBe("now");
    expect(pacer.offer("n", drifted)).toBe("later");
    expect(pacer.offer("n", frame(3, "c"))).toBe("later");
    now += 2000;
    pacer.flush("n");
    expect(carried).toEqual([["motd"]]);
  });
  it("takes a report to write now over one waiting: the waiting one is dropped, its drift carried, and the window starts again", () => {
    let now = 0;
    const released: number[] = [];
    const pacer = createReportPacer({ intervalMs: 2000, hash, release: (_n, f) => released.push(f.seq), now: () => now });
    const drifted = frame(2, "b");
    drifted.report.drift = [{ id: "motd", type: "file", declared: "a".repeat(64), observed: null, description: "missing", corrected: true }];
    expect(pacer.offer("n", frame(1, "a"))).toBe("now");
    expect(pacer.offer("n", drifted)).toBe("later");
    expect([...(pacer.take("n", frame(3, "c"))?.values() ?? [])].map((d) => d.drift.id)).toEqual(["motd"]);
    now += 2000;
    pacer.flushAll();
    expect(released).toEqual([]);
    expect(pacer.offer("n", frame(4, "c"))).toBe("unchanged");
  });
});
