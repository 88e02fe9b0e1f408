// The summary line counts every kind of change: the host's own package released is neither removed nor restored.
import { describe, expect, it } from "vitest";
import type { Report } from "@mesh/protocol";
import { describeOutcome } from "./outcome";

const report: Report = {
  declarationVersion: 3,
  owned: [],
  drift: [],
  errors: [],
  skipped: [],
  storeLost: false,
  reconciledAt: new Date(0).toISOString(),
};

describe("the outcome line", () => {
  it("counts the host's own package released (left installed, no longer owned)", () => {
    const lines = describeOutcome(
      report,
      [
        { kind: "released", id: "host-pkg", type: "package", subject: "package:mesh-host", detail: "left installed" },
        { kind: "removed", id: "tmp", type: "file", subject: "path:/tmp/x" },
      ],
      2,
    );
    expect(lines[0]).toBe("released package host-pkg package:mesh-host: left installed");
    expect(lines.at(-1)).toBe("declaration v3: 0 created, 0 adopted, 0 updated, 1 removed, 0 restored, 1 released, 2 unchanged, 0 errors, 0 skipped; 0 owned");
  });
});
