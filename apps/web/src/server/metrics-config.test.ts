// /metrics protection settings: bad values are refused at start with a clear error, and the bearer
// check takes only the exact token, in the Bearer scheme.
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config";
import { bearerMatches } from "./metrics-route";

const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: "test", ...env });

describe("metrics settings", () => {
  it("reads the token, the separate address and the alert timings", () => {
    const c = load({ MESH_METRICS_TOKEN: "x".repeat(16), MESH_METRICS_ADDRESS: "127.0.0.1:9464", MESH_ALERT_INTERVAL_MS: "1000" });
    expect(c.metrics).toEqual({ token: "x".repeat(16), address: { host: "127.0.0.1", port: 9464 } });
    expect(c.alerts).toEqual({ intervalMs: 1000, retryBaseMs: 10_000 });
    expect(load({ MESH_METRICS_ADDRESS: "[::1]:9464" }).metrics.address).toEqual({ host: "::1", port: 9464 });
    expect(load({}).metrics).toEqual({ token: undefined, address: undefined });
  });

  it("refuses a short token, an address without a port, and a port out of range", () => {
    expect(() => load({ MESH_METRICS_TOKEN: "short" })).toThrow(/at least 16 characters/);
    expect(() => load({ MESH_METRICS_ADDRESS: "127.0.0.1" })).toThrow(/host:port/);
    expect(() => load({ MESH_METRICS_ADDRESS: "http://127.0.0.1:9464" })).toThrow(/host:port/);
    expect(() => load({ MESH_METRICS_ADDRESS: "127.0.0.1:99999" })).toThrow(/over 65535/);
    expect(() => load({ MESH_ALERT_INTERVAL_MS: "5" })).toThrow();
  });

  it("takes only the exact token in the Bearer scheme", () => {
    const token = "metrics-token-0123456789";
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`Bearer ${token}x`, token)).toBe(false);
    expect(bearerMatches(`Basic ${token}`, token)).toBe(false);
    expect(bearerMatches(undefined, token)).toBe(false);
    expect(bearerMatches("Bearer ", token)).toBe(false);
  });
});
