// The upgrade's settings from the environment: a bad value is refused at start, naming the
// variable, never read as NaN nor quietly replaced by the default.
import { describe, expect, it } from "vitest";
import { HostError } from "../host-error";
import { DEFAULT_SETTLE_WAIT_MS, settleWaitMsFromEnv } from "./host-package";
import { DEFAULT_TRIAL_MS, trialMsFromEnv } from "./self-upgrade";

describe("MESH_UPGRADE_TRIAL_MS", () => {
  it("reads a whole number of ms; unset or empty is the default", () => {
    expect(trialMsFromEnv({ MESH_UPGRADE_TRIAL_MS: "1500" })).toBe(1500);
    expect(trialMsFromEnv({})).toBe(DEFAULT_TRIAL_MS);
    expect(trialMsFromEnv({ MESH_UPGRADE_TRIAL_MS: "" })).toBe(DEFAULT_TRIAL_MS);
  });

  it.each(["abc", "-5", "1.5", "0", "10s"])("refuses %s, naming the variable", (value) => {
    const read = () => trialMsFromEnv({ MESH_UPGRADE_TRIAL_MS: value });
    expect(read).toThrow(HostError);
    expect(read).toThrow(`MESH_UPGRADE_TRIAL_MS=${value}: must be a whole number of milliseconds above 0`);
  });
});

describe("MESH_SETTLE_WAIT_MS", () => {
  it("reads a whole number of ms, 0 included (do not wait); unset is the default", () => {
    expect(settleWaitMsFromEnv({ MESH_SETTLE_WAIT_MS: "300" })).toBe(300);
    expect(settleWaitMsFromEnv({ MESH_SETTLE_WAIT_MS: "0" })).toBe(0);
    expect(settleWaitMsFromEnv({})).toBe(DEFAULT_SETTLE_WAIT_MS);
  });

  it.each(["abc", "-5", "1.5", "1e3"])("refuses %s, naming the variable", (value) => {
    expect(() => settleWaitMsFromEnv({ MESH_SETTLE_WAIT_MS: value })).toThrow(
      `MESH_SETTLE_WAIT_MS=${value}: must be a whole number of milliseconds (0 or more)`,
    );
  });
});
