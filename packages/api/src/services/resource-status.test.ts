// Table test of the pure per-resource status the node page shows.
import { describe, expect, it } from "vitest";
import type { Report, Resource } from "@mesh/protocol";
import { resourceStatuses } from "./resource-status";
import { testReport } from "../testing/host-facts";

const sha = (c: string) => c.repeat(64);
const file = (id: string): Resource => ({ type: "file", id, path: `/etc/${id}`, content: "x", mode: "0644", onDrift: "correct" }) as Resource;
const report = (over: Partial<Report>): Report => testReport(3, { ...over });

describe("resourceStatuses", () => {
  const resources = ["a", "b", "c", "d", "e"].map(file);
  const latest = report({
    owned: [
      { id: "a", type: "file", digest: sha("a") },
      { id: "b", type: "file", digest: sha("b") },
    ],
    drift: [{ id: "b", type: "file", declared: sha("1"), observed: sha("2"), description: "content differs", corrected: false }],
    errors: [{ id: "c", message: "permission denied" }],
    skipped: [{ id: "d", reason: "c failed" }],
  });
  it.each([
    ["a", "applied", undefined],
    ["b", "drifted", "content differs"],
    ["c", "failed", "permission denied"],
    ["d", "skipped", "c failed"],
    ["e", "pending", undefined],
  ])("%s is %s", (id, status, detail) => {
    const s = resourceStatuses(resources, 3, latest).find((r) => r.id === id)!;
    expect(s.status).toBe(status);
    expect(s.detail).toBe(detail);
  });
  it("calls everything pending while the host has not reported the declared version", () => {
    expect(resourceStatuses(resources, 4, latest).every((s) => s.status === "pending")).toBe(true);
    expect(resourceStatuses(resources, 1, null).every((s) => s.status === "pending")).toBe(true);
  });
  it("counts corrected drift as applied", () => {
    const r = report({
      owned: [{ id: "a", type: "file", digest: sha("a") }],
      drift: [{ id: "a", type: "file", declared: sha("1"), observed: sha("2"), description: "x", corrected: true }],
    });
    expect(resourceStatuses([file("a")], 3, r)[0]!.status).toBe("applied");
  });
});
