// What systemd makes of how a command ended: clean or not (SuccessExitStatus=, clean signals, a
// oneshot), and whether each Restart= policy starts it again.
import { describe, expect, it } from "vitest";
import { type Exit, describeExit, shouldRestart, succeeded } from "./command-exit";

const exited = (code: number): Exit => ({ code, signal: null });
const killed = (signal: NodeJS.Signals): Exit => ({ code: null, signal });
const SIMPLE = { type: "simple" as const, successExitStatus: [75] };
const ONESHOT = { type: "oneshot" as const, successExitStatus: [] };

describe("succeeded", () => {
  it.each([
    { e: exited(0), spec: SIMPLE, clean: true },
    { e: exited(1), spec: SIMPLE, clean: false },
    { e: exited(75), spec: SIMPLE, clean: true },
    { e: killed("SIGTERM"), spec: SIMPLE, clean: true },
    { e: killed("SIGHUP"), spec: SIMPLE, clean: true },
    { e: killed("SIGKILL"), spec: SIMPLE, clean: false },
    { e: killed("SIGTERM"), spec: ONESHOT, clean: false },
    { e: { code: null, signal: null, error: "cannot run /x: ENOENT" }, spec: SIMPLE, clean: false },
  ])("$e with Type=$spec.type: $clean", ({ e, spec, clean }) => {
    expect(succeeded(e, spec)).toBe(clean);
  });
});

describe("shouldRestart", () => {
  // Columns: a clean exit, an unclean exit status, an unclean signal.
  it.each([
    { policy: "no" as const, restarts: [false, false, false] },
    { policy: "always" as const, restarts: [true, true, true] },
    { policy: "on-success" as const, restarts: [true, false, false] },
    { policy: "on-failure" as const, restarts: [false, true, true] },
    { policy: "on-abnormal" as const, restarts: [false, false, true] },
    { policy: "on-abort" as const, restarts: [false, false, true] },
  ])("Restart=$policy", ({ policy, restarts }) => {
    expect([shouldRestart(policy, true, exited(0)), shouldRestart(policy, false, exited(1)), shouldRestart(policy, false, killed("SIGKILL"))]).toEqual(
      restarts,
    );
  });
});

describe("describeExit", () => {
  it.each([
    { e: exited(3), line: "exited with status 3" },
    { e: killed("SIGKILL"), line: "killed by SIGKILL" },
    { e: { code: null, signal: null, error: "cannot run /x: ENOENT" }, line: "cannot run /x: ENOENT" },
  ])("$line", ({ e, line }) => expect(describeExit(e)).toBe(line));
});
