// Table tests for the pure planner: create, adopt, no-op, update, drift (correct
// and report), remove and restore, hand-over, and the order of steps.
import { describe, expect, it } from "vitest";
import { Declaration, resourceSubject, type Resource, type ResourceInput } from "@mesh/protocol";
import { providerFor } from "../resources/providers";
import { digestOf, project, type State } from "../resources/observed";
import type { OwnedRecord } from "../store/ownership";
import { plan, type Observation, type Step } from "./planner";

const decl = (resources: ResourceInput[], version = 1) => Declaration.parse({ version, resources });
const parse = (r: ResourceInput): Resource => decl([r]).resources[0]!;
const dir = (id: string, path: string, mode = "0755"): ResourceInput => ({ type: "directory", id, path, mode });
const file = (id: string, path: string, content = "x", mode = "0644"): ResourceInput => ({ type: "file", id, path, content, mode });
const pkg = (id: string, name: string): ResourceInput => ({ type: "package", id, name });
const svc = (id: string, unit: string, after?: string[]): ResourceInput => ({ type: "service", id, unit, ...(after ? { after } : {}) });

/** The state a resource declares, as if observed (with an owner, which it does not declare). */
function asObserved(r: ResourceInput): State {
  return { ...providerFor(parse(r).type).declared(parse(r)), uid: 0, gid: 0, owner: "root", group: "root" };
}
const subject = (r: ResourceInput) => resourceSubject(parse(r));
function record(r: ResourceInput, extra: Partial<OwnedRecord> = {}): OwnedRecord {
  const p = parse(r);
  return { id: p.id, type: p.type, subject: resourceSubject(p), applied: digestOf(providerFor(p.type).declared(p)), ...extra };
}
const seen = (...pairs: [ResourceInput, State | null][]) => new Map<string, Observation>(pairs.map(([r, s]) => [subject(r), { state: s }]));
const summary = (steps: Step[]) =>
  steps.map((s) => {
    const id = s.kind === "remove" ? s.record.id : s.resource.id;
    return s.kind === "adopt" ? `adopt${s.change ? "+change" : ""}:${id}` : `${s.kind}:${id}`;
  });

describe("plan", () => {
  const site = dir("site", "/srv/site");
  const index = file("index", "/srv/site/index.html", "hello");
  const adoptedOriginal = { original: { kind: "directory" as const, mode: "0700", uid: 0, gid: 0 }, digest: "e".repeat(64) };

  const cases: { name: string; declared: ResourceInput[]; records: OwnedRecord[]; observed: Map<string, Observation>; want: string[] }[] = [
    {
      name: "creates what is neither owned nor present, parents first",
      declared: [index, site],
      records: [],
      observed: seen(),
      want: ["create:site", "create:index"],
    },
    { name: "adopts what already matches, without a change", declared: [site], records: [], observed: seen([site, asObserved(site)]), want: ["adopt:site"] },
    {
      name: "adopts what stands there but differs, with a change",
      declared: [site],
      records: [],
      observed: seen([site, { ...asObserved(site), mode: "0700" }]),
      want: ["adopt+change:site"],
    },
    {
      name: "no-op when owned and as declared (an undeclared owner is not compared)",
      declared: [site, index],
      records: [record(site), record(index)],
      observed: seen([site, asObserved(site)], [index, { ...asObserved(index), owner: "nobody" }]),
      want: ["noop:site", "noop:index"],
    },
    {
      name: "updates an owned resource whose declaration changed",
      declared: [file("index", "/srv/site/index.html", "new")],
      records: [record(index)],
      observed: seen([index, asObserved(index)]),
      want: ["update:index"],
    },
    {
      name: "removes what left the declaration, children before parents",
      declared: [],
      records: [record(site), record(index), record(dir("deep", "/srv/site/a"))],
      observed: seen(),
      // The reverse of the order they would be made in.
      want: ["remove:deep", "remove:index", "remove:site"],
    },
    {
      name: "removes in reverse of `after`",
      declared: [],
      records: [record(file("a", "/a"), { after: ["b"] }), record(file("b", "/b"))],
      observed: seen(),
      want: ["remove:a", "remove:b"],
    },
    { name: "removals come before creates", declared: [dir("new", "/opt")], records: [record(site)], observed: seen(), want: ["remove:site", "create:new"] },
    {
      name: "an adopted resource that left is a removal step (the executor restores it)",
      declared: [],
      records: [record(site, { adopted: adoptedOriginal })],
      observed: seen([site, asObserved(site)]),
      want: ["remove:site"],
    },
    {
      name: "a subject declared again under a new id is handed over, not removed",
      declared: [dir("site2", "/srv/site")],
      records: [record(site, { adopted: adoptedOriginal })],
      observed: new Map([["path:/srv/site", { state: asObserved(site) }]]),
      want: ["noop:site2"],
    },
    {
      name: "an owned id that moved path is removed at the old path and created at the new",
      declared: [dir("site", "/srv/www")],
      records: [record(site)],
      observed: seen([site, asObserved(site)]),
      want: ["remove:site", "create:site"],
    },
    {
      name: "a path that changes type is removed, then made anew",
      declared: [{ type: "symlink", id: "site", path: "/srv/site", target: "/opt" }],
      records: [record(site)],
      observed: seen([site, null]),
      want: ["remove:site", "create:site"],
    },
    {
      name: "after orders resources beyond path ancestry",
      declared: [file("b", "/b", "b"), { ...file("a", "/a"), after: ["c"] }, file("c", "/c")],
      records: [],
      observed: seen(),
      want: ["create:b", "create:c", "create:a"],
    },
    {
      name: "packages come before services",
      declared: [svc("web", "nginx.service"), pkg("nginx", "nginx"), pkg("curl", "curl")],
      records: [],
      observed: seen([svc("web", "nginx.service"), null], [pkg("nginx", "nginx"), null], [pkg("curl", "curl"), null]),
      want: ["create:nginx", "create:curl", "create:web"],
    },
    {
      name: "a package after a service keeps its explicit order",
      declared: [svc("web", "nginx.service"), { ...pkg("plugin", "nginx-extras"), after: ["web"] }, pkg("nginx", "nginx")],
      records: [],
      observed: seen(),
      want: ["create:nginx", "create:web", "create:plugin"],
    },
    {
      name: "a subject that could not be observed is a failed step",
      declared: [site],
      records: [],
      observed: new Map([["path:/srv/site", { error: "outside the root" }]]),
      want: ["fail:site"],
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const result = plan({ declaration: decl(c.declared), records: c.records, observed: c.observed });
      expect(summary(result.steps)).toEqual(c.want);
      expect(result.problems).toEqual([]);
    });
  }

  it("says what each step waits for: its parent directory and its `after`", () => {
    const { steps } = plan({ declaration: decl([site, { ...index, after: ["conf"] }, file("conf", "/conf")]), records: [], observed: seen() });
    const byId = new Map(steps.map((s) => [s.key, s.needs]));
    expect(byId.get("index")).toEqual([
      { id: "site", why: "parent directory" },
      { id: "conf", why: "after" },
    ]);
    expect(byId.get("site")).toEqual([]);
  });

  it("a removal waits for the removals of what is inside it", () => {
    const { steps } = plan({ declaration: decl([]), records: [record(site), record(index)], observed: seen() });
    expect(steps.map((s) => [s.key, s.needs])).toEqual([
      ["remove:index", []],
      ["remove:site", [{ id: "remove:index", why: "parent directory" }]],
    ]);
  });

  it("drift with onDrift correct is an update that carries the drift", () => {
    const drifted = { ...asObserved(index), mode: "0600" };
    const { steps } = plan({ declaration: decl([index]), records: [record(index)], observed: seen([index, drifted]) });
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({
      kind: "update",
      drift: { description: "mode 0600, declared 0644", declared: digestOf(providerFor("file").declared(parse(index))) },
    });
  });

  it("drift with onDrift report is a no-op that carries the drift", () => {
    const reported = { ...index, onDrift: "report" } as ResourceInput;
    const { steps } = plan({ declaration: decl([reported]), records: [record(index)], observed: seen([index, { ...asObserved(index), mode: "0600" }]) });
    expect(steps[0]).toMatchObject({ kind: "noop", drift: { description: "mode 0600, declared 0644" } });
  });

  it("reports a missing owned resource as drift 'missing'", () => {
    const { steps } = plan({ declaration: decl([site]), records: [record(site)], observed: seen([site, null]) });
    expect(steps[0]).toMatchObject({ kind: "update", drift: { description: "missing", observed: null } });
  });

  it("a changed declaration is an update, not drift", () => {
    const { steps } = plan({ declaration: decl([dir("site", "/srv/site", "0700")]), records: [record(site)], observed: seen([site, asObserved(site)]) });
    expect(steps[0]).toMatchObject({ kind: "update", drift: null });
  });

  it("describes owner and content drift in one line", () => {
    const owned = { ...file("f", "/f", "a"), owner: "www-data" } as ResourceInput;
    const observed = { ...asObserved(owned), owner: "root", sha256: "0".repeat(64) };
    const { steps } = plan({ declaration: decl([owned]), records: [record(owned)], observed: seen([owned, observed]) });
    expect(steps[0]).toMatchObject({
      drift: { description: expect.stringMatching(/^content differs \(sha256 000000000000…, declared [0-9a-f]{12}…\); owner root, declared www-data$/) },
    });
  });

  it("an `after` against path ancestry is a problem, not a hang", () => {
    const { steps, problems } = plan({
      declaration: decl([{ ...site, after: ["index"] }, index]),
      records: [],
      observed: seen(),
    });
    expect(summary(steps).sort()).toEqual(["create:index", "create:site"]);
    expect(problems.length).toBeGreaterThan(0);
  });
  describe("reconcile now: correct and accept", () => {
    const reported = { ...index, onDrift: "report" } as ResourceInput;
    const moved = { ...asObserved(reported), mode: "0600" };
    const movedDigest = digestOf(project(moved, providerFor("file").declared(parse(reported))));

    it("correct turns an onDrift report no-op into an update that carries the drift", () => {
      const { steps } = plan({ declaration: decl([reported]), records: [record(reported)], observed: seen([reported, moved]), correct: new Set(["index"]) });
      expect(steps[0]).toMatchObject({ kind: "update", drift: { description: "mode 0600, declared 0644" } });
    });

    it("accept makes it a no-op without drift, carrying the accepted digest to record", () => {
      const { steps } = plan({ declaration: decl([reported]), records: [record(reported)], observed: seen([reported, moved]), accept: new Set(["index"]) });
      expect(steps[0]).toMatchObject({ kind: "noop", drift: null, accept: movedDigest });
    });

    it("drift accepted before stays quiet while it stands as accepted, and is reported once it moves", () => {
      const rec = record(reported, { accepted: movedDigest });
      expect(plan({ declaration: decl([reported]), records: [rec], observed: seen([reported, moved]) }).steps[0]).toMatchObject({
        kind: "noop",
        drift: null,
        accept: movedDigest,
      });
      const movedAgain = { ...moved, mode: "0640" };
      expect(plan({ declaration: decl([reported]), records: [rec], observed: seen([reported, movedAgain]) }).steps[0]).toMatchObject({
        kind: "noop",
        drift: { description: "mode 0640, declared 0644" },
      });
      expect(plan({ declaration: decl([reported]), records: [rec], observed: seen([reported, asObserved(reported)]) }).steps[0]).toMatchObject({
        kind: "noop",
        drift: null,
      });
      expect(plan({ declaration: decl([reported]), records: [rec], observed: seen([reported, asObserved(reported)]) }).steps[0]).not.toHaveProperty("accept");
    });

    it("a changed declaration is applied whatever was accepted; onDrift correct is never accepted", () => {
      const rec = record(reported, { accepted: movedDigest });
      const changed = { ...reported, content: "new" } as ResourceInput;
      expect(plan({ declaration: decl([changed]), records: [rec], observed: seen([changed, moved]) }).steps[0]).toMatchObject({ kind: "update", drift: null });
      expect(plan({ declaration: decl([index]), records: [record(index)], observed: seen([index, moved]), accept: new Set(["index"]) }).steps[0]).toMatchObject(
        { kind: "update", drift: { description: "mode 0600, declared 0644" } },
      );
    });
  });
});
