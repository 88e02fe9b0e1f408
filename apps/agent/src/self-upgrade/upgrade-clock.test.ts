// The self-upgrade keeps time by the agent's one injected Clock (decision 0050): its trial
// deadlines and its wait at the start move with a test's clock, and its code calls no timer of its own.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../log";
import { ManualClock } from "../manual-clock";
import type { Runner } from "../runner/runner";
import { RecordingRunner } from "../runner/recording-runner";
import { MemoryStore } from "../store/memory-store";
import { tempDirs } from "../testing/temp-dirs";
import { settleAtStart } from "./host-package";
import { SelfUpgrade } from "./self-upgrade";
import { BREADCRUMB_KEY, Breadcrumb, FAILED_KEY } from "./upgrade-files";

const freshDir = tempDirs("mesh-upgrade-clock-");
let dir: string;
let binary: string;
let store: MemoryStore;
beforeEach(() => {
  dir = freshDir();
  binary = join(dir, "mesh-host");
  writeFileSync(binary, "binary 1.0.0\n", { mode: 0o755 });
  store = new MemoryStore();
});

describe("the self-upgrade's clock", () => {
  it("dates the breadcrumb written before the host's own package by the injected clock", async () => {
    const clock = new ManualClock(Date.parse("2031-05-01T00:00:00Z"));
    const runner = new RecordingRunner([{ match: ["dpkg-query"], result: { stdout: "install ok installed\t1.0.0\n" }, repeat: true }]);
    const up = new SelfUpgrade({
      store,
      binary,
      running: "1.0.0",
      trialMs: 30_000,
      publicKey: null,
      log: silentLogger(),
      clock,
      packages: { runner, root: dir },
    });
    await up.beforeHostPackage("1.1.0");
    const crumb = Breadcrumb.parse(JSON.parse(String(await store.read(BREADCRUMB_KEY))));
    expect(crumb.deadline).toBe("2031-05-01T00:00:30.000Z");
  });

  it("waits for dpkg's record at the start by the injected clock", async () => {
    const clock = new ManualClock();
    await store.write(
      FAILED_KEY,
      JSON.stringify({
        from: "1.0.0",
        to: "1.1.0",
        binary,
        deadline: new Date(0).toISOString(),
        trialMs: 1000,
        package: { name: "mesh-host", previous: "1.0.0" },
      }),
    );
    // dpkg-query that never answers (a held lock, a hung mirror).
    const hung: Runner = { run: () => new Promise(() => undefined) };
    let done = false;
    const started = settleAtStart(store, { runner: hung, root: dir }, "1.0.0", binary, silentLogger(), 10_000, clock).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    clock.advance(10_000);
    const result = await started;
    expect(result).not.toBeNull();
  });

  it("calls no timer and reads no time of its own (only through the Clock)", () => {
    const src = join(__dirname);
    for (const file of readdirSync(src).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
      const text = readFileSync(join(src, file), "utf8");
      expect(text, file).not.toMatch(/Date\.now\(|(?<![.\w])(setTimeout|setInterval|clearTimeout)\(/);
    }
  });
});
