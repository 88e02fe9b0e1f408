import { describe, expect, it } from "vitest";
import { BeatRun } from "./beat-run";

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

describe("a gateway's run of beats", () => {
  it("keeps its start while beats come on time", () => {
    const run = new BeatRun(10_000);
    expect(run.beat(t(0))).toEqual({ watchedSince: t(0), recovered: false });
    expect(run.beat(t(5))).toEqual({ watchedSince: t(0), recovered: false });
    expect(run.beat(t(15))).toEqual({ watchedSince: t(0), recovered: false });
  });

  it("starts again after a failed beat, and says that beat ended an outage", () => {
    const run = new BeatRun(10_000);
    run.beat(t(0));
    run.failure();
    run.failure();
    // Back within the gap: a failure alone breaks the run.
    expect(run.beat(t(5))).toEqual({ watchedSince: t(5), recovered: true });
    expect(run.beat(t(10))).toEqual({ watchedSince: t(5), recovered: false });
  });

  it("starts again after a gap wider than allowed between two good beats (a late loop, a slow database)", () => {
    const run = new BeatRun(10_000);
    run.beat(t(0));
    expect(run.beat(t(40))).toEqual({ watchedSince: t(40), recovered: false });
  });
});
