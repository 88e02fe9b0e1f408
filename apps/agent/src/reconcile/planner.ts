// The reconcile plan, pure: (declaration, owned records, observed states) ->
// steps. Removals come first, children before parents; then declared resources, parents first.
import type { Declaration, Resource } from "@mesh/protocol";
import { providerFor } from "../resources/providers";
import { describeDifference, digestOf, type ObservedState } from "../resources/observed";
import type { OwnedRecord } from "../store/ownership";

export interface DriftNote {
  declared: string;
  observed: string | null;
  description: string;
}

export type Step =
  /** Owned and as declared: nothing to do (the record may still learn a new digest). */
  | { kind: "noop"; resource: Resource; record: OwnedRecord; declaredDigest: string }
  /** Not owned, but the machine already matches: start owning it without a change. */
  | { kind: "adopt"; resource: Resource; declaredDigest: string }
  /** Not owned and not as declared: make it, recording the intent first. */
  | { kind: "create"; resource: Resource; declaredDigest: string; existed: boolean }
  /** Owned but not as declared: a new declaration, or drift when the machine moved. */
  | { kind: "update"; resource: Resource; record: OwnedRecord; declaredDigest: string; drift: DriftNote | null }
  /** Owned and no longer declared: take it away. */
  | { kind: "remove"; record: OwnedRecord }
  /** Owned under an id that left, but its path is declared again under another id: hand it over untouched. */
  | { kind: "release"; record: OwnedRecord };

export interface PlanInput {
  declaration: Declaration;
  /** Confirmed records only; intents are resolved before planning. */
  records: readonly OwnedRecord[];
  /** Observed state by declared path, for every declared and every recorded path. */
  observed: ReadonlyMap<string, ObservedState | null>;
}

export interface Plan {
  steps: Step[];
  /** Ordering problems (an `after` cycle); the plan still runs in declared order there. */
  problems: { id: string; message: string }[];
}

export function plan(input: PlanInput): Plan {
  const declaredById = new Map(input.declaration.resources.map((r) => [r.id, r]));
  const declaredByPath = new Map(input.declaration.resources.map((r) => [r.path, r]));
  const recordById = new Map(input.records.map((r) => [r.id, r]));

  const leaving: { record: OwnedRecord; index: number }[] = [];
  input.records.forEach((record, index) => {
    const still = declaredById.get(record.id);
    if (!still || still.path !== record.path || still.type !== record.type) leaving.push({ record, index });
  });
  // Children before parents, so an owned directory is empty of owned things when its turn comes.
  leaving.sort((a, b) => depth(b.record.path) - depth(a.record.path) || b.index - a.index);

  const steps: Step[] = leaving.map(({ record }) => {
    const heir = declaredByPath.get(record.path);
    return heir && heir.type === record.type && heir.id !== record.id
      ? { kind: "release", record }
      : { kind: "remove", record };
  });

  const { order, problems } = orderDeclared(input.declaration.resources, declaredById, declaredByPath);
  for (const resource of order) {
    const declaredState = providerFor(resource.type).declared(resource);
    const declaredDigest = digestOf(declaredState);
    const observed = input.observed.get(resource.path) ?? null;
    const observedDigest = observed ? digestOf(observed) : null;
    const record = recordById.get(resource.id);
    const owned = record && record.path === resource.path && record.type === resource.type ? record : undefined;

    if (!owned) {
      steps.push(
        observedDigest === declaredDigest
          ? { kind: "adopt", resource, declaredDigest }
          : { kind: "create", resource, declaredDigest, existed: observed !== null },
      );
    } else if (observedDigest === declaredDigest) {
      steps.push({ kind: "noop", resource, record: owned, declaredDigest });
    } else {
      // Drift is the machine moving away from what was applied while the declaration
      // stood still; a changed declaration is an update, not drift.
      const drift: DriftNote | null =
        owned.applied === declaredDigest
          ? { declared: declaredDigest, observed: observedDigest, description: describeDifference(observed, declaredState) }
          : null;
      steps.push({ kind: "update", resource, record: owned, declaredDigest, drift });
    }
  }
  return { steps, problems };
}

function depth(path: string): number {
  return path.split("/").length;
}

/** Depth-first post-order over `after` and path ancestry, otherwise in declared order. */
function orderDeclared(
  resources: readonly Resource[],
  byId: ReadonlyMap<string, Resource>,
  byPath: ReadonlyMap<string, Resource>,
): { order: Resource[]; problems: { id: string; message: string }[] } {
  const order: Resource[] = [];
  const problems: { id: string; message: string }[] = [];
  const state = new Map<string, "visiting" | "done">();

  const dependencies = (r: Resource): Resource[] => {
    const deps: Resource[] = [];
    for (let p = parentOf(r.path); p; p = parentOf(p)) {
      const ancestor = byPath.get(p);
      if (ancestor) deps.push(ancestor);
    }
    for (const id of r.after ?? []) {
      const dep = byId.get(id);
      if (dep) deps.push(dep);
    }
    return deps;
  };

  const visit = (r: Resource): void => {
    const s = state.get(r.id);
    if (s === "done") return;
    if (s === "visiting") {
      problems.push({ id: r.id, message: `ordering cycle through "${r.id}" (after); applied in declared order` });
      return;
    }
    state.set(r.id, "visiting");
    for (const dep of dependencies(r)) visit(dep);
    state.set(r.id, "done");
    order.push(r);
  };
  for (const r of resources) visit(r);
  return { order, problems };
}

function parentOf(path: string): string | null {
  const i = path.lastIndexOf("/");
  return i > 0 ? path.slice(0, i) : null;
}
