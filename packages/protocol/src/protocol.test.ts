import { describe, expect, it } from "vitest";
import {
  AuthFrame,
  Declaration,
  EnrolRequest,
  EnrolResponse,
  HostFrame,
  Role,
  canonicalJson,
  describeZodError,
  replacementProofMessage,
  storedBefore,
} from "./index";

describe("protocol schemas", () => {
  it("takes a report with or without an origin, and refuses a malformed one; a sequence at or below the stored one of its stream was stored", () => {
    const report = { declarationVersion: 1, owned: [], drift: [], errors: [], reconciledAt: "2026-01-01T00:00:00.000Z" };
    const frame = (r: object) => HostFrame.safeParse({ type: "report", seq: 3, report: r });
    expect(frame(report).success).toBe(true);
    expect(frame({ ...report, origin: { stream: "0123456789abcdef", sequence: 3 } }).success).toBe(true);
    for (const origin of [
      { stream: "short", sequence: 1 },
      { stream: "0123456789abcdef", sequence: -1 },
      { stream: "0123456789abcdef", sequence: 1, extra: 1 },
    ]) {
      expect(frame({ ...report, origin }).success).toBe(false);
    }
    const stored = { stream: "a".repeat(16), sequence: 5 };
    expect(storedBefore({ stream: stored.stream, sequence: 5 }, stored)).toBe(true);
    expect(storedBefore({ stream: stored.stream, sequence: 6 }, stored)).toBe(false);
    expect(storedBefore({ stream: "b".repeat(16), sequence: 0 }, stored)).toBe(false);
    expect(storedBefore(undefined, stored)).toBe(false);
    expect(storedBefore(stored, null)).toBe(false);
  });

  it("fills resource defaults and keeps the declared fields", () => {
    const d = Declaration.parse({ version: 1, resources: [{ type: "file", id: "a", path: "/a", content: "x" }] });
    expect(d.resources[0]).toEqual({ type: "file", id: "a", path: "/a", content: "x", encoding: "utf8", mode: "0644", onDrift: "correct" });
  });

  it.each([
    ["relative path", { type: "file", id: "a", path: "a", content: "" }, "resources.0.path"],
    ["dot-dot path", { type: "file", id: "a", path: "/a/../b", content: "" }, "resources.0.path"],
    ["trailing slash", { type: "directory", id: "a", path: "/a/" }, "resources.0.path"],
    ["bad mode", { type: "directory", id: "a", path: "/a", mode: "rwx" }, "resources.0.mode"],
    ["unknown type", { type: "teapot", id: "a", path: "/a" }, "resources.0.type"],
    ["unknown field", { type: "directory", id: "a", path: "/a", owner: 1 }, "resources.0"],
    ["oversized content", { type: "file", id: "a", path: "/a", content: "x".repeat(256 * 1024 + 1) }, "resources.0.content"],
  ])("refuses a %s, naming the field", (_name, resource, field) => {
    const r = Declaration.safeParse({ version: 1, resources: [resource] });
    expect(r.success).toBe(false);
    expect(describeZodError(r.error!)).toContain(field);
  });

  it("refuses repeated ids and paths", () => {
    const dup = Declaration.safeParse({
      version: 1,
      resources: [
        { type: "directory", id: "a", path: "/a" },
        { type: "directory", id: "a", path: "/b" },
        { type: "directory", id: "c", path: "/b" },
      ],
    });
    expect(describeZodError(dup.error!)).toMatch(/duplicate id "a".*duplicate path \/b/);
  });

  it("refuses two resources managing one package or unit", () => {
    const r = Declaration.safeParse({
      version: 1,
      resources: [
        { type: "package", id: "a", name: "curl" },
        { type: "package", id: "b", name: "curl", state: "absent" },
        { type: "service", id: "c", unit: "x.service" },
        { type: "service", id: "d", unit: "x.service" },
      ],
    });
    expect(describeZodError(r.error!)).toMatch(/duplicate package curl.*duplicate service x.service/);
  });

  it("refuses an after that names nothing, and a dependency cycle", () => {
    const dangling = Declaration.safeParse({ version: 1, resources: [{ type: "directory", id: "a", path: "/a", after: ["nope"] }] });
    expect(describeZodError(dangling.error!)).toContain('resources.0.after.0: names no resource "nope"');
    const cycle = Declaration.safeParse({
      version: 1,
      resources: [
        { type: "directory", id: "a", path: "/a", after: ["c"] },
        { type: "directory", id: "b", path: "/b", after: ["a"] },
        { type: "directory", id: "c", path: "/c", after: ["b"] },
      ],
    });
    expect(describeZodError(cycle.error!)).toMatch(/dependency cycle: a -> c -> b -> a/);
  });

  it("takes a file with exactly one of content or source", () => {
    const sha256 = "a".repeat(64);
    expect(Declaration.safeParse({ version: 1, resources: [{ type: "file", id: "f", path: "/f", source: { url: "/api/files/x", sha256 } }] }).success).toBe(
      true,
    );
    expect(Declaration.safeParse({ version: 1, resources: [{ type: "file", id: "f", path: "/f" }] }).success).toBe(false);
    expect(Declaration.safeParse({ version: 1, resources: [{ type: "file", id: "f", path: "/f", content: "", source: { url: "/x", sha256 } }] }).success).toBe(
      false,
    );
  });

  it("refuses frames that do not match", () => {
    expect(HostFrame.safeParse({ type: "report", seq: 1, report: { owned: "lots" } }).success).toBe(false);
    expect(AuthFrame.safeParse({ type: "auth", nodeId: "not-a-uuid" }).success).toBe(false);
  });

  it("gives an empty selector to a role without one", () => {
    expect(Role.parse({ name: "web", resources: [] }).selector).toEqual({});
    expect(Role.safeParse({ name: "Web Servers", resources: [] }).success).toBe(false);
  });

  it("writes canonical JSON with sorted keys at every depth", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[{"y":2,"z":1}]},"b":1}');
  });

  it("an enrol request may carry a proof of the old key; its message is domain-separated and names everything it binds", () => {
    const profile = {
      hostname: "h",
      os: "debian",
      osRelease: "12",
      osVersionId: "12",
      kernel: "6",
      arch: "x86_64",
      cpus: 1,
      memoryBytes: 1,
      diskBytes: 1,
      initSystem: "systemd",
      packageManager: "dpkg",
      machineId: "m",
      hostVersion: "0",
    };
    const base = { token: "abc123.x", publicKey: "k".repeat(44), profile, inventory: { packages: [], units: [], ports: [], mounts: [], truncated: false } };
    const replaces = { nodeId: "8f0c6c3e-6d3b-4c1e-9b7a-2f1d0e5a4b3c", time: "2026-12-03T10:00:00.000Z", signature: "c2ln" };
    expect(EnrolRequest.safeParse({ ...base, replaces }).success).toBe(true);
    expect(EnrolRequest.safeParse({ ...base, replaces: { ...replaces, extra: 1 } }).success).toBe(false);
    expect(EnrolRequest.safeParse({ ...base, replaces: { ...replaces, time: "yesterday" } }).success).toBe(false);
    expect(EnrolResponse.parse({ nodeId: replaces.nodeId, name: "n", labels: {}, awaitingApproval: true }).awaitingApproval).toBe(true);
    expect(replacementProofMessage(replaces.nodeId, "NEWKEY", "abc123", replaces.time)).toBe(
      `mesh-enrol-replace-v1\n${replaces.nodeId}\nNEWKEY\nabc123\n${replaces.time}`,
    );
  });
});
