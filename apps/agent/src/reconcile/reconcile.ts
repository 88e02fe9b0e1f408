// One level-based reconcile: read the store, resolve intents, observe, plan,
// apply step by step with the store written before and after each change, then report.
import { LIMITS, type Declaration, type Drift, type OwnedResource, type Report, type ResourceError } from "@mesh/protocol";
import type { Logger } from "../log";
import { reasonOf } from "../host-error";
import { digestOf, observePath, type ObservedState } from "../resources/observed";
import { providerFor } from "../resources/providers";
import type { Root } from "../resources/root";
import { loadOwnership, saveOwnership, type OwnedRecord, type Ownership } from "../store/ownership";
import type { Store } from "../store/store";
import { plan, type Step } from "./planner";

export interface ReconcileDeps {
  store: Store;
  root: Root;
  log: Logger;
  /** Whether the host is enrolled: then a missing store means a lost one. */
  enrolled: boolean;
  now?: () => Date;
}

export interface ReconcileInput {
  /** The declaration to reach; null observes and reports only (nothing held yet). */
  declaration: Declaration | null;
  /** Errors that belong in this report but not to a resource step (a rejected declaration). */
  extraErrors?: ResourceError[];
  rejectedVersion?: number;
  /** The control plane acknowledged a report saying the store was lost: stop saying it. */
  clearLost?: boolean;
}

export type ChangeKind = "created" | "adopted" | "updated" | "removed" | "released" | "kept" | "failed";

export interface ReconcileOutcome {
  report: Report;
  changes: { kind: ChangeKind; id: string; type: string; path: string; detail?: string }[];
  unchanged: number;
}

export async function reconcile(deps: ReconcileDeps, input: ReconcileInput): Promise<ReconcileOutcome> {
  const now = deps.now ?? (() => new Date());
  const loaded = await loadOwnership(deps.store, { enrolled: deps.enrolled, now: now() });
  if (loaded.lostNow) {
    deps.log.warn({ keptAs: loaded.keptAs }, "store lost: what was owned before can no longer be removed");
  }
  const ownership = loaded.ownership;
  if (input.clearLost && !loaded.lostNow) delete ownership.lostAt;
  const save = () => saveOwnership(deps.store, ownership);
  const errors: ResourceError[] = [...(input.extraErrors ?? [])];
  const drift: Drift[] = [];
  const changes: ReconcileOutcome["changes"] = [];
  let unchanged = 0;
  const fail = (id: string | null, err: unknown) => errors.push({ id, message: clip(reasonOf(err)) });

  // Host paths and what stands there, by declared path; a path the root refuses stays unresolved.
  const hostPaths = new Map<string, string>();
  const refused = new Map<string, string>();
  const observed = new Map<string, ObservedState | null>();
  const look = async (path: string): Promise<ObservedState | null> => {
    if (!hostPaths.has(path) && !refused.has(path)) {
      try {
        hostPaths.set(path, await deps.root.resolve(path));
      } catch (err) {
        refused.set(path, reasonOf(err));
      }
    }
    const hostPath = hostPaths.get(path);
    const state = hostPath ? await observePath(hostPath, path) : null;
    observed.set(path, state);
    return state;
  };

  await resolveIntents(ownership, look, deps.log);
  await save();

  if (input.declaration) {
    const confirmed = ownership.records.filter((r) => !r.pending);
    for (const r of input.declaration.resources) await observeOrFail(r.path);
    for (const r of confirmed) await observeOrFail(r.path);
    const { steps, problems } = plan({ declaration: input.declaration, records: confirmed, observed });
    for (const p of problems) errors.push({ id: p.id, message: clip(p.message) });
    for (const step of steps) {
      const id = step.kind === "remove" || step.kind === "release" ? step.record.id : step.resource.id;
      const path = step.kind === "remove" || step.kind === "release" ? step.record.path : step.resource.path;
      const why = refused.get(path);
      if (why !== undefined && step.kind !== "release") {
        fail(id, why);
        continue;
      }
      await runStep(step, hostPaths.get(path) ?? "");
    }
  }

  // Owned is what stands on the machine now, not what was once applied.
  const owned: OwnedResource[] = [];
  for (const record of ownership.records) {
    if (record.pending) continue;
    let state: ObservedState | null = null;
    try {
      state = await look(record.path);
    } catch (err) {
      fail(record.id, err);
    }
    if (state) owned.push({ id: record.id, type: record.type, digest: digestOf(state) });
  }

  const report: Report = {
    declarationVersion: input.declaration?.version ?? 0,
    ...(input.rejectedVersion !== undefined ? { rejectedVersion: input.rejectedVersion } : {}),
    owned: owned.slice(0, LIMITS.resources),
    drift: drift.slice(0, LIMITS.resources),
    errors: errors.slice(0, LIMITS.reportErrors),
    storeLost: ownership.lostAt !== undefined,
    reconciledAt: now().toISOString(),
  };
  return { report, changes, unchanged };

  async function observeOrFail(path: string): Promise<void> {
    if (observed.has(path)) return;
    try {
      await look(path);
    } catch (err) {
      // Reported once, by the step for this path.
      refused.set(path, reasonOf(err));
    }
  }

  async function runStep(step: Step, hostPath: string): Promise<void> {
    switch (step.kind) {
      case "noop": {
        unchanged++;
        if (step.record.applied !== step.declaredDigest) {
          step.record.applied = step.declaredDigest;
          await save();
        }
        return;
      }
      case "adopt": {
        const { resource } = step;
        ownership.records.push({ id: resource.id, type: resource.type, path: resource.path, applied: step.declaredDigest });
        await save();
        changes.push({ kind: "adopted", id: resource.id, type: resource.type, path: resource.path });
        return;
      }
      case "create": {
        const { resource } = step;
        // The intent goes to disk before the machine changes, so a crash cannot leave it unowned.
        const record: OwnedRecord = {
          id: resource.id,
          type: resource.type,
          path: resource.path,
          applied: step.declaredDigest,
          pending: true,
          existed: step.existed,
        };
        ownership.records.push(record);
        await save();
        try {
          await providerFor(resource.type).apply(resource, hostPath, observed.get(resource.path) ?? null);
        } catch (err) {
          fail(resource.id, err);
          changes.push({ kind: "failed", id: resource.id, type: resource.type, path: resource.path, detail: reasonOf(err) });
          // Half a create that left something new behind is still the host's to own.
          const after = await observePath(hostPath, resource.path).catch(() => null);
          if (after && !step.existed) delete record.pending, delete record.existed;
          else ownership.records.splice(ownership.records.indexOf(record), 1);
          await save();
          return;
        }
        delete record.pending;
        delete record.existed;
        await save();
        changes.push({ kind: "created", id: resource.id, type: resource.type, path: resource.path });
        return;
      }
      case "update": {
        const { resource, record } = step;
        let corrected = true;
        try {
          await providerFor(resource.type).apply(resource, hostPath, observed.get(resource.path) ?? null);
          record.applied = step.declaredDigest;
          await save();
          changes.push({ kind: "updated", id: resource.id, type: resource.type, path: resource.path, detail: step.drift?.description });
        } catch (err) {
          corrected = false;
          fail(resource.id, err);
          changes.push({ kind: "failed", id: resource.id, type: resource.type, path: resource.path, detail: reasonOf(err) });
        }
        if (step.drift) {
          drift.push({
            id: resource.id,
            type: resource.type,
            declared: step.drift.declared,
            observed: step.drift.observed,
            description: clip(step.drift.description),
            corrected,
          });
          deps.log.info({ id: resource.id, path: resource.path, drift: step.drift.description, corrected }, "drift");
        }
        return;
      }
      case "remove": {
        const { record } = step;
        let outcome;
        try {
          outcome = await providerFor(record.type).remove(hostPath, record.path);
        } catch (err) {
          fail(record.id, err);
          changes.push({ kind: "failed", id: record.id, type: record.type, path: record.path, detail: reasonOf(err) });
          return;
        }
        if (outcome.kind === "kept") {
          // Still the host's: it stays recorded and is tried again on the next reconcile.
          fail(record.id, outcome.reason);
          changes.push({ kind: "kept", id: record.id, type: record.type, path: record.path, detail: outcome.reason });
          return;
        }
        ownership.records.splice(ownership.records.indexOf(record), 1);
        await save();
        changes.push({ kind: "removed", id: record.id, type: record.type, path: record.path });
        return;
      }
      case "release": {
        const { record } = step;
        ownership.records.splice(ownership.records.indexOf(record), 1);
        await save();
        changes.push({ kind: "released", id: record.id, type: record.type, path: record.path });
        return;
      }
    }
  }
}

/**
 * A create intent left by a crash: whatever now stands at the path was made by
 * the host if nothing stood there before; if something did, it is owned only
 * when it matches what the host was writing.
 */
async function resolveIntents(
  ownership: Ownership,
  look: (path: string) => Promise<ObservedState | null>,
  log: Logger,
): Promise<void> {
  for (const record of [...ownership.records]) {
    if (!record.pending) continue;
    let state: ObservedState | null = null;
    try {
      state = await look(record.path);
    } catch {
      state = null;
    }
    const keep = state !== null && (!record.existed || digestOf(state) === record.applied);
    if (keep) {
      delete record.pending;
      delete record.existed;
    } else {
      ownership.records.splice(ownership.records.indexOf(record), 1);
    }
    log.info({ id: record.id, path: record.path, owned: keep }, "resolved an interrupted create");
  }
}

function clip(message: string): string {
  return message.length > LIMITS.message ? message.slice(0, LIMITS.message - 1) + "…" : message;
}
