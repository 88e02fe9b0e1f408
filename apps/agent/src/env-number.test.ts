// The host's numeric settings from the environment, through the one reader (env-number.ts): a bad
// value is refused at start, naming the variable, never read as NaN nor quietly replaced by the default.
import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "./env-number";
import { HostError } from "./host-error";
import { DEFAULT_LINK_TIMEOUT_MS, linkTimeoutMs } from "./link/heartbeat";
import { maxSourceBytes } from "./resources/file-source";

describe("MESH_LINK_TIMEOUT_MS", () => {
  it("reads a whole number of ms; unset or empty is the default", () => {
    expect(linkTimeoutMs({ MESH_LINK_TIMEOUT_MS: "3000" })).toBe(3000);
    expect(linkTimeoutMs({})).toBe(DEFAULT_LINK_TIMEOUT_MS);
    expect(linkTimeoutMs({ MESH_LINK_TIMEOUT_MS: " " })).toBe(DEFAULT_LINK_TIMEOUT_MS);
  });

  it.each(["abc", "-5", "1.5", "0", "45s", "1e3"])("refuses %s, naming the variable", (value) => {
    const read = () => linkTimeoutMs({ MESH_LINK_TIMEOUT_MS: value });
    expect(read).toThrow(HostError);
    expect(read).toThrow(`MESH_LINK_TIMEOUT_MS=${value}: must be a whole number of milliseconds above 0`);
  });
});

describe("a duration longer than Node's timers", () => {
  it("is refused, naming the variable (Node would fire it after 1 ms)", () => {
    expect(linkTimeoutMs({ MESH_LINK_TIMEOUT_MS: String(MAX_TIMER_MS) })).toBe(MAX_TIMER_MS);
    expect(() => linkTimeoutMs({ MESH_LINK_TIMEOUT_MS: "2592000000" })).toThrow(`MESH_LINK_TIMEOUT_MS=2592000000: at most ${MAX_TIMER_MS} milliseconds`);
  });
});

describe("MESH_SOURCE_MAX_BYTES", () => {
  it("reads a whole number of bytes; unset is the default cap", () => {
    expect(maxSourceBytes({ MESH_SOURCE_MAX_BYTES: "1048576" })).toBe(1048576);
    expect(maxSourceBytes({})).toBe(512 * 1024 * 1024);
  });

  it.each(["lots", "-1", "0", "1.5", "10M"])("refuses %s, naming the variable", (value) => {
    expect(() => maxSourceBytes({ MESH_SOURCE_MAX_BYTES: value })).toThrow(`MESH_SOURCE_MAX_BYTES=${value}: must be a whole number of bytes above 0`);
  });
});
