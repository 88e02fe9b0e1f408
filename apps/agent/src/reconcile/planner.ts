// The reconcile plan, pure: (declaration, owned records, observed states) -> steps.
// Removals first, in reverse dependency order; then declared resources, dependencies first.
import { resourceSubject, type Declaration, type Resource } from "@mesh/protocol";
import { providerFor } from "../resources/providers";
import { describeDifference, digestOf, project, type State } from "../resources/observed";
import type { OwnedRecord } from "../store/ownership";
import { orderNodes, type Need, type OrderNode } from "./order";

export interface DriftNote {
  declared: string;
  observed: string | null;
  description: string;
}

/** What observing one subject gave: its state (null: nothing there), or why it could not be observed. */
export type Observation = { state: State | null } | { error: string };

interface Declared {
  resource: Resource;
  declared: State;
  declaredDigest: string;
}

/** `key` names the step for `needs`: a resource id, or `remove:<id>` for a removal. */
export type Step = { key: string; needs: Need[] } & StepKind;
type StepKind =
  /** Owned and as declared, or drifted with onDrift "report" (`drift` set, nothing changed). */
  /** `accept`: drift accepted now or before, as observed (its digest, or "absent"): nothing reported. */
  | ({ kind: "noop"; record: OwnedRecord; drift: DriftNote | null; accept?: string } & Declared)
  /** Neither owned nor present: make it. */
  | ({ kind: "create" } & Declared)
  /** Present but not owned: keep what stands there, then bring it to the declaration (`change`). */
  | ({ kind: "adopt"; observed: State; change: boolean } & Declared)
  /** Owned but not as declared: a new declaration, or drift (`drift` set) when the machine moved. */
  | ({ kind: "update"; record: OwnedRecord; drift: DriftNote | null } & Declared)
  /** Owned and no longer declared: take it away, or restore the original of an adopted one. */
  | { kind: "remove"; record: OwnedRecord }
  /** Declared, but its subject could not be observed (a path that leaves the root, a missing tool). */
  | { kind: "fail"; resource: Resource; message: string };

export interface PlanInput {
  declaration: Declaration;
  /** Records without an open intent; intents are resolved before planning. */
  records: readonly OwnedRecord[];
  /** By subject, for every declared subject. */
  observed: ReadonlyMap<string, Observation>;
  /** The declared state of a resource; the providers' by default. */
  declare?: (resource: Resource) => State;
  /** `onDrift: report` resources whose drift this plan corrects once (reconcile now, `correct`). */
  correct?: ReadonlySet<string>;
  /** Resources whose drift as observed now is accepted (reconcile now, `accept`). */
  accept?: ReadonlySet<string>;
}

export interface Plan {
  steps: Step[];
  problems: { id: string; message: string }[];
}

const provider = (r: Resource) => providerFor(r.type);

export function plan(input: PlanInput): Plan {
  const declare = input.declare ?? ((r: Resource) => providerFor(r.type).declared(r));
  const resources = input.declaration.resources;
  const subjects = new Map(resources.map((r) => [r.id, resourceSubject(r)]));
  const declaredBySubject = new Map(resources.map((r) => [resourceSubject(r), r]));
  const declaredById = new Map(resources.map((r) => [r.id, r]));

  // A record is the resource's while id, type and subject still agree; a record whose
  // subject is declared again with the same type under a new id is handed over, originals and all.
  const ownedBy = new Map<string, OwnedRecord>();
  const leaving: OwnedRecord[] = [];
  for (const record of input.records) {
    const same = declaredById.get(record.id);
    if (same && same.type === record.type && subjects.get(same.id) === record.subject) ownedBy.set(record.id, record);
    else leaving.push(record);
  }
  const stillLeaving: OwnedRecord[] = [];
  for (const record of leaving) {
    const heir = declaredBySubject.get(record.subject);
    if (heir && heir.type === record.type && !ownedBy.has(heir.id)) ownedBy.set(heir.id, record);
    else stillLeaving.push(record);
  }

  const steps: Step[] = [];
  const removal = orderNodes<OrderNode>(stillLeaving.map((r) => ({ id: r.id, type: r.type, subject: r.subject, after: r.after })));
  // Backwards: a removal waits for the removal of everything that needed it.
  const neededBy = new Map<string, Need[]>();
  for (const [id, list] of removal.needs) {
    for (const need of list) neededBy.set(need.id, [...(neededBy.get(need.id) ?? []), { id: `remove:${id}`, why: need.why }]);
  }
  const leavingById = new Map(stillLeaving.map((r) => [r.id, r]));
  for (const node of [...removal.order].reverse()) {
    steps.push({ kind: "remove", key: `remove:${node.id}`, needs: neededBy.get(node.id) ?? [], record: leavingById.get(node.id)! });
  }

  const ordered = orderNodes(resources.map((r) => ({ id: r.id, type: r.type, subject: subjects.get(r.id)!, after: r.after, resource: r })));
  for (const { resource } of ordered.order) {
    const key = resource.id;
    const needs = ordered.needs.get(key) ?? [];
    const observation = input.observed.get(subjects.get(key)!) ?? { state: null };
    if ("error" in observation) {
      steps.push({ kind: "fail", key, needs, resource, message: observation.error });
      continue;
    }
    const declared = declare(resource);
    const declaredDigest = digestOf(declared);
    const base = { key, needs, resource, declared, declaredDigest };
    const observed = observation.state;
    const matches = observed !== null && digestOf(project(observed, declared)) === declaredDigest;
    const record = ownedBy.get(key);
    if (!record) {
      const stands = observed !== null && (provider(resource).exists?.(observed) ?? true);
      steps.push(stands ? { kind: "adopt", ...base, observed: observed!, change: !matches } : { kind: "create", ...base });
      continue;
    }
    if (matches) {
      steps.push({ kind: "noop", ...base, record, drift: null });
      continue;
    }
    // Drift is the machine moving away from what was applied while the declaration
    // stood still; a changed declaration is an update, not drift.
    const drift: DriftNote | null =
      record.applied === declaredDigest
        ? {
            declared: declaredDigest,
            observed: observed ? digestOf(project(observed, declared)) : null,
            description: provider(resource).describe?.(resource, observed) ?? describeDifference(observed, declared),
          }
        : null;
    const seen = drift ? (drift.observed ?? "absent") : null;
    const accepted = resource.onDrift === "report" && (input.accept?.has(key) || record.accepted === seen);
    if (drift && seen && accepted) steps.push({ kind: "noop", ...base, record, drift: null, accept: seen });
    else if (drift && resource.onDrift === "report" && !input.correct?.has(key)) steps.push({ kind: "noop", ...base, record, drift });
    else steps.push({ kind: "update", ...base, record, drift });
  }
  return { steps, problems: [...removal.problems, ...ordered.problems] };
}
