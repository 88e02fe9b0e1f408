// Table tests for the pure planner: create, adopt, update, drift, remove,
// release, no-op, and the order of steps.
import { describe, expect, it } from "vitest";
import { Declaration, type ResourceInput } from "@mesh/protocol";
import { providerFor } from "../resources/providers";
import { digestOf, type ObservedState } from "../resources/observed";
import type { OwnedRecord } from "../store/ownership";
import { plan, type Step } from "./planner";

const decl = (resources: ResourceInput[], version = 1) => Declaration.parse({ version, resources });
const dir = (id: string, path: string, mode = "0755"): ResourceInput => ({ type: "directory", id, path, mode });
const file = (id: string, path: string, content = "x", mode = "0644"): ResourceInput => ({ type: "file", id, path, content, mode });

/** The state a resource declares, as if observed. */
function asObserved(r: ResourceInput): ObservedState {
  const parsed = decl([r]).resources[0]!;
  return providerFor(parsed.type).declared(parsed);
}
function record(r: ResourceInput, applied?: ObservedState): OwnedRecord {
  return { id: r.id, type: r.type, path: r.path, applied: digestOf(applied ?? asObserved(r)) };
}
const summary = (steps: Step[]) =>
  steps.map((s) => `${s.kind}:${s.kind === "remove" || s.kind === "release" ? s.record.id : s.resource.id}`);

describe("plan", () => {
  const site = dir("site", "/srv/site");
  const index = file("index", "/srv/site/index.html", "hello");

  const cases: {
    name: string;
    declared: ResourceInput[];
    records: OwnedRecord[];
    observed: [string, ObservedState | null][];
    want: string[];
  }[] = [
    {
      name: "creates what is neither owned nor present, parents first",
      declared: [index, site],
      records: [],
      observed: [],
      want: ["create:site", "create:index"],
    },
    {
      name: "adopts what already matches",
      declared: [site],
      records: [],
      observed: [["/srv/site", asObserved(site)]],
      want: ["adopt:site"],
    },
    {
      name: "no-op when owned and as declared",
      declared: [site, index],
      records: [record(site), record(index)],
      observed: [["/srv/site", asObserved(site)], ["/srv/site/index.html", asObserved(index)]],
      want: ["noop:site", "noop:index"],
    },
    {
      name: "updates an owned resource whose declaration changed",
      declared: [file("index", "/srv/site/index.html", "new")],
      records: [record(index)],
      observed: [["/srv/site/index.html", asObserved(index)]],
      want: ["update:index"],
    },
    {
      name: "removes what left the declaration, children before parents",
      declared: [],
      records: [record(site), record(index), record(dir("deep", "/srv/site/a"))],
      observed: [],
      want: ["remove:deep", "remove:index", "remove:site"],
    },
    {
      name: "removals come before creates",
      declared: [dir("new", "/opt")],
      records: [record(site)],
      observed: [],
      want: ["remove:site", "create:new"],
    },
    {
      name: "a path declared again under a new id is handed over, not removed",
      declared: [dir("site2", "/srv/site")],
      records: [record(site)],
      observed: [["/srv/site", asObserved(site)]],
      want: ["release:site", "adopt:site2"],
    },
    {
      name: "an owned id that moved path is removed at the old path and created at the new",
      declared: [dir("site", "/srv/www")],
      records: [record(site)],
      observed: [["/srv/site", asObserved(site)]],
      want: ["remove:site", "create:site"],
    },
    {
      name: "after orders resources beyond path ancestry",
      declared: [file("b", "/b", "b", "0644"), { ...file("a", "/a"), after: ["c"] }, file("c", "/c")],
      records: [],
      observed: [],
      want: ["create:b", "create:c", "create:a"],
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const result = plan({ declaration: decl(c.declared), records: c.records, observed: new Map(c.observed) });
      expect(summary(result.steps)).toEqual(c.want);
      expect(result.problems).toEqual([]);
    });
  }

  it("reports drift only when the machine moved away from an unchanged declaration", () => {
    const drifted: ObservedState = { ...(asObserved(index) as Extract<ObservedState, { type: "file" }>), mode: "0600" };
    const { steps } = plan({
      declaration: decl([index]),
      records: [record(index)],
      observed: new Map([["/srv/site/index.html", drifted]]),
    });
    expect(steps).toHaveLength(1);
    const step = steps[0]!;
    expect(step.kind).toBe("update");
    if (step.kind !== "update") return;
    expect(step.drift?.description).toBe("mode 0600, declared 0644");
    expect(step.drift?.observed).toBe(digestOf(drifted));
    expect(step.drift?.declared).toBe(digestOf(asObserved(index)));
  });

  it("reports a missing owned resource as drift 'missing'", () => {
    const { steps } = plan({ declaration: decl([site]), records: [record(site)], observed: new Map() });
    expect(steps[0]).toMatchObject({ kind: "update", drift: { description: "missing", observed: null } });
  });

  it("a changed declaration is an update, not drift", () => {
    const { steps } = plan({
      declaration: decl([dir("site", "/srv/site", "0700")]),
      records: [record(site)],
      observed: new Map([["/srv/site", asObserved(site)]]),
    });
    expect(steps[0]).toMatchObject({ kind: "update", drift: null });
  });

  it("a cycle in `after` is a problem, not a hang", () => {
    const { steps, problems } = plan({
      declaration: decl([{ ...file("a", "/a"), after: ["b"] }, { ...file("b", "/b"), after: ["a"] }]),
      records: [],
      observed: new Map(),
    });
    expect(summary(steps).sort()).toEqual(["create:a", "create:b"]);
    expect(problems.length).toBeGreaterThan(0);
  });
});
