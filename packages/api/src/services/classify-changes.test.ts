// Table tests of the plan's verbs: proposed resources and what the host reported → what happens on the machine.
import { describe, expect, it } from "vitest";
import { Resource } from "@mesh/protocol";
import type { Resource as R } from "@mesh/protocol";
import { classifyChanges, type ReportedMachine } from "./classify-changes";
import { declaredState, stateDigest } from "./declared-state";
import type { ContentDiff } from "./plan-changes";

const file = (id: string, content: string, more: Record<string, unknown> = {}) =>
  Resource.parse({ type: "file", id, path: `/srv/www/${id}`, content, ...more });
const pkg = (version?: string) => Resource.parse({ type: "package", id: "nginx", name: "nginx", ...(version ? { version } : {}) });
const svc = (state: "running" | "stopped") => Resource.parse({ type: "service", id: "web", unit: "web.service", state });
const digest = (r: R) => stateDigest(declaredState(r));
const owns = (...rs: Array<R | { r: R; digest: string; adopted?: boolean }>): ReportedMachine => ({
  owned: rs.map((x) =>
    "r" in x ? { id: x.r.id, type: x.r.type, digest: x.digest, ...(x.adopted ? { adopted: true } : {}) } : { id: x.id, type: x.type, digest: digest(x) },
  ),
  drift: [],
  errors: [],
});
const missingParent = (path: string, id = "other"): ReportedMachine => ({
  owned: [],
  drift: [],
  errors: [{ id, message: `parent directory of ${path} does not exist (declare it as a directory resource)` }],
});

interface Row {
  name: string;
  before: R[];
  after: R[];
  report: ReportedMachine | null;
  want: Array<Record<string, unknown>>;
}

const rows: Row[] = [
  { name: "new resource, host does not own it: create", before: [], after: [file("a", "1")], report: owns(), want: [{ id: "a", action: "create" }] },
  {
    name: "changed resource the host never got (it failed): create, not update",
    before: [file("a", "1")],
    after: [file("a", "2")],
    report: owns(),
    want: [{ id: "a", action: "create" }],
  },
  {
    name: "changed content, host holds the last declared content: update with a diff",
    before: [file("a", "1\n")],
    after: [file("a", "2\n")],
    report: owns(file("a", "1\n")),
    want: [{ id: "a", action: "update", diff: expect.any(String) }],
  },
  {
    name: "mode change: before/after from what the host holds",
    before: [file("a", "1")],
    after: [file("a", "1", { mode: "0600" })],
    report: owns(file("a", "1")),
    want: [{ id: "a", action: "update", fields: [{ key: "mode", before: "0644", after: "0600" }] }],
  },
  {
    name: "package version pinned: before/after",
    before: [pkg("1.0")],
    after: [pkg("1.1")],
    report: owns(pkg("1.0")),
    want: [{ id: "nginx", action: "update", fields: [{ key: "version", before: "1.0", after: "1.1" }] }],
  },
  {
    // One Debian version however its epoch is spelt (sameDebianVersion): the host holds what is declared.
    name: "package version re-spelt with a zero epoch: adopt (the host holds it), not update",
    before: [pkg("1.0-1")],
    after: [pkg("00:1.0-1")],
    report: owns(pkg("1.0-1")),
    want: [{ id: "nginx", action: "adopt" }],
  },
  {
    name: "service stopped → running: before/after",
    before: [svc("stopped")],
    after: [svc("running")],
    report: owns(svc("stopped")),
    want: [{ id: "web", action: "update", fields: [{ key: "running", before: false, after: true }] }],
  },
  {
    name: "host drifted: update, before unknown, drift said",
    before: [file("a", "1")],
    after: [file("a", "2")],
    report: {
      ...owns({ r: file("a", "1"), digest: "0".repeat(64) }),
      drift: [{ id: "a", type: "file", declared: digest(file("a", "1")), observed: "0".repeat(64), description: "content differs", corrected: false }],
    },
    want: [{ id: "a", action: "update", observed: "content differs" }],
  },
  { name: "host already has it as proposed: adopt", before: [], after: [file("a", "2")], report: owns(file("a", "2")), want: [{ id: "a", action: "adopt" }] },
  {
    name: "declaration changes, machine already matches: adopt",
    before: [file("a", "1")],
    after: [file("a", "1", { onDrift: "report" })],
    report: owns(file("a", "1")),
    want: [{ id: "a", action: "adopt" }],
  },
  {
    name: "declaration unchanged: unchanged",
    before: [file("a", "1")],
    after: [file("a", "1")],
    report: owns(file("a", "1")),
    want: [{ id: "a", action: "unchanged" }],
  },
  { name: "dropped and owned: remove", before: [file("a", "1")], after: [], report: owns(file("a", "1")), want: [{ id: "a", action: "remove" }] },
  {
    name: "dropped, owned as adopted: remove restores",
    before: [file("a", "1")],
    after: [],
    report: owns({ r: file("a", "1"), digest: digest(file("a", "1")), adopted: true }),
    want: [{ id: "a", action: "remove", restores: true }],
  },
  { name: "dropped, never owned: unchanged", before: [file("a", "1")], after: [], report: owns(), want: [{ id: "a", action: "unchanged" }] },
  {
    name: "parent reported missing: create that certainly fails",
    before: [],
    after: [file("a", "1")],
    report: missingParent("/srv/www/b"),
    want: [{ id: "a", action: "create", fails: "parent directory /srv/www missing at the last report" }],
  },
  {
    name: "parent missing but proposed as a directory: no failure",
    before: [],
    after: [Resource.parse({ type: "directory", id: "www", path: "/srv/www" }), file("a", "1")],
    report: missingParent("/srv/www/b"),
    want: [
      { id: "www", action: "create" },
      { id: "a", action: "create" },
    ],
  },
  {
    name: "another error for the resource: failed last time",
    before: [file("a", "1")],
    after: [file("a", "2")],
    report: { owned: [], drift: [], errors: [{ id: "a", message: "EACCES" }] },
    want: [{ id: "a", action: "create", failedLastTime: "EACCES" }],
  },
  {
    name: "no report: verbs from the declarations",
    before: [file("a", "1"), file("b", "1")],
    after: [file("a", "2"), file("c", "1")],
    report: null,
    want: [
      { id: "a", action: "update", diff: expect.any(String) },
      { id: "c", action: "create" },
      { id: "b", action: "remove" },
    ],
  },
];

describe("classifyChanges", () => {
  it.each(rows)("$name", ({ before, after, report, want }) => {
    const got = classifyChanges(before, after, report, new Map<string, ContentDiff>());
    expect(got.map(({ type: _t, subject: _s, ...c }) => c)).toEqual(want);
  });

  it("stores a content diff once however many nodes share it", () => {
    const diffs = new Map<string, ContentDiff>();
    for (let i = 0; i < 3; i++) classifyChanges([file("a", "1\n")], [file("a", "2\n")], owns(file("a", "1\n")), diffs);
    expect([...diffs.values()]).toEqual([{ lines: ["@@ -1,1 +1,1 @@", "-1", "+2"], omitted: 0 }]);
  });
});
