// The providers' context carries the host's clock (decision 0050: one injected clock), so a wait
// inside a step (dpkg's locks) runs on it; without one it is the system's.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../clock";
import { ManualClock } from "../manual-clock";
import { Root } from "../resources/root";
import { RecordingRunner } from "../runner/recording-runner";
import { MemoryStore } from "../store/memory-store";
import { providerContext } from "./provider-context";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function context(clock?: ManualClock) {
  const rootDir = mkdtempSync(join(tmpdir(), "mesh-ctx-"));
  dirs.push(rootDir);
  const base = { root: new Root(rootDir), store: new MemoryStore(), controlPlane: null, resources: [], records: [], runner: new RecordingRunner() };
  return providerContext(clock ? { ...base, clock } : base);
}

describe("providerContext", () => {
  it("hands the host's clock to the providers", () => {
    const clock = new ManualClock();
    const ctx = context(clock);
    expect(ctx.clock).toBe(clock);
    ctx.paths.close();
  });

  it("uses the system's clock when given none", () => {
    const ctx = context();
    expect(ctx.clock).toBe(systemClock);
    ctx.paths.close();
  });
});
