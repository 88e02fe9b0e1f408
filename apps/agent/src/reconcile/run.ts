// One reconcile's work on the machine: settle open intents, then the plan's steps in
// windows (intents durable before a window's changes, results after), and what is owned at the end.
import {
  LIMITS,
  resourceSubject,
  type RemoteSource,
  type Declaration,
  type Drift,
  type OwnedResource,
  type Resource,
  type ResourceError,
  type ResourceType,
  type SkippedResource,
} from "@mesh/protocol";
import { failpoint } from "../failpoint";
import { reasonOf } from "../host-error";
import type { Logger } from "../log";
import { digestOf, project, type State } from "../resources/observed";
import type { ProviderContext } from "../resources/provider";
import { providerFor, subjectKey } from "../resources/providers";
import { saveOwnership, type OwnedRecord, type Ownership } from "../store/ownership";
import type { Store } from "../store/store";
import { resolveIntent } from "./intents";
import { observeOne, observeSubjects } from "./observe-subjects";
import { plan, type Observation, type Step } from "./planner";

export type ChangeKind = "created" | "adopted" | "updated" | "removed" | "restored" | "released" | "kept" | "failed" | "skipped";

export interface Change {
  kind: ChangeKind;
  id: string;
  type: string;
  subject: string;
  detail?: string;
}

/**
 * Intents and results are written once per window of steps rather than per step:
 * a 1,000-resource apply then writes store.json ~30 times, not 2,000. Every change
 * still has its intent on disk before it starts.
 */
const WINDOW = 64;

/** The source a step will download: a file it writes from one, where another content stands. */
function sourceOf(step: Step, observed: ReadonlyMap<string, Observation>): RemoteSource[] {
  if (step.kind !== "create" && step.kind !== "update" && !(step.kind === "adopt" && step.change)) return [];
  const { resource } = step;
  if (resource.type !== "file" || !resource.source) return [];
  const seen = observed.get(resourceSubject(resource));
  const standing = seen && "state" in seen ? seen.state : null;
  return standing?.type === "file" && standing.sha256 === resource.source.sha256 ? [] : [resource.source];
}

export class Run {
  readonly errors: ResourceError[] = [];
  readonly drift: Drift[] = [];
  readonly skipped: SkippedResource[] = [];
  readonly changes: Change[] = [];
  unchanged = 0;
  /** By subject; a subject the host changed is dropped here and observed again for the report. */
  private readonly observed = new Map<string, Observation>();
  /** Digests the plan already took of untouched subjects (a no-op's is its declared one), for the report. */
  private readonly digests = new Map<string, string>();
  private readonly failed = new Set<string>();
  private readonly skippedKeys = new Set<string>();
  private dirty = false;

  constructor(
    private readonly deps: { store: Store; log: Logger; signal?: AbortSignal },
    private readonly ownership: Ownership,
    private readonly ctx: ProviderContext,
  ) {}

  private save(): Promise<void> {
    this.dirty = false;
    return saveOwnership(this.deps.store, this.ownership);
  }

  private fail(id: string | null, err: unknown): void {
    this.errors.push({ id, message: clip(this.ctx.paths.readable(reasonOf(err))) });
  }

  private drop(record: OwnedRecord): void {
    const i = this.ownership.records.indexOf(record);
    if (i >= 0) this.ownership.records.splice(i, 1);
    this.dirty = true;
  }

  /** An original's content goes with the last record that refers to it. */
  private async dropOriginal(record: OwnedRecord): Promise<void> {
    const original = record.adopted?.original;
    if (original?.kind !== "file") return;
    const shared = this.ownership.records.some((r) => r !== record && r.adopted?.original.kind === "file" && r.adopted.original.blob === original.blob);
    if (!shared) await this.ctx.originals.drop(original.blob).catch(() => undefined);
  }

  /** A subject the host changed: observed again for the report. */
  private forget(subject: string): void {
    this.observed.delete(subject);
    this.digests.delete(subject);
  }

  private async look(record: { type: OwnedRecord["type"]; subject: string }, resource: Parameters<typeof observeOne>[2] = null): Promise<Observation> {
    let o = this.observed.get(record.subject);
    if (!o) this.observed.set(record.subject, (o = await observeOne(record.type, record.subject, resource, this.ctx)));
    return o;
  }

  /** Each type in play gets its once-per-reconcile repair (an interrupted dpkg) before anything is observed. */
  async prepareTypes(types: Iterable<ResourceType>): Promise<void> {
    for (const type of new Set(types)) {
      const prepare = providerFor(type).prepare;
      if (!prepare) continue;
      try {
        for (const message of await prepare(this.ctx)) {
          this.errors.push({ id: null, message: clip(message) });
          this.deps.log.warn({ type }, message);
        }
      } catch (err) {
        this.fail(null, `${type}: ${reasonOf(err)}`);
      }
    }
  }

  /** Every intent a killed host left open is settled by what is observed now. */
  async resolveOpenIntents(): Promise<void> {
    const open = this.ownership.records.filter((r) => r.intent);
    if (open.length === 0) return;
    for (const record of open) {
      const op = record.intent!.op;
      const observation = await this.look(record);
      if ("error" in observation) {
        // Left open: tried again on the next reconcile, and not planned on until then.
        this.fail(record.id, `cannot settle an interrupted ${op}: ${observation.error}`);
        continue;
      }
      await this.settle(record);
      const verdict = resolveIntent(record, observation.state, providerFor(record.type).atomic);
      if (verdict === "dropped") {
        this.drop(record);
        await this.dropOriginal(record);
      }
      this.deps.log.info({ id: record.id, subject: record.subject, op, verdict }, "resolved an interrupted change");
    }
    await this.save();
    failpoint("intents-resolved");
  }

  private async settle(record: OwnedRecord): Promise<void> {
    const settle = providerFor(record.type).settle;
    if (settle) await settle(subjectKey(record.subject), this.ctx).catch(() => undefined);
  }

  async apply(declaration: Declaration, requested?: { correct?: ReadonlySet<string>; accept?: ReadonlySet<string> }): Promise<void> {
    const records = this.ownership.records.filter((r) => !r.intent);
    const wanted = declaration.resources.map((r) => ({ type: r.type, subject: resourceSubject(r), resource: r }));
    await observeSubjects(wanted, this.ctx, this.observed);
    const { steps, problems } = plan({ declaration, records, observed: this.observed, correct: requested?.correct, accept: requested?.accept });
    for (const p of problems) this.errors.push({ id: p.id, message: clip(p.message) });
    for (let i = 0; i < steps.length; i += WINDOW) {
      // Aborted (the run's deadline): between windows, nothing is half done.
      this.deps.signal?.throwIfAborted();
      await this.window(steps.slice(i, i + WINDOW));
    }
  }

  private blocked(step: Step): string | null {
    // A no-op changes nothing, so there is nothing to hold back.
    if (step.kind === "noop") return null;
    for (const need of step.needs) {
      const name = need.id.startsWith("remove:") ? `removal of "${need.id.slice(7)}"` : `${need.why} "${need.id}"`;
      if (this.failed.has(need.id)) return `${name} failed`;
      if (this.skippedKeys.has(need.id)) return `${name} was skipped`;
    }
    return null;
  }

  private async window(steps: Step[]): Promise<void> {
    // 1. Intents (and the originals of what is adopted) go to disk before anything changes.
    const records = new Map<Step, OwnedRecord>();
    for (const step of steps) {
      if (this.blocked(step)) continue;
      const record = await this.prepare(step);
      if (record) records.set(step, record);
    }
    if (this.dirty) {
      await this.save();
      failpoint("intent-written");
    }
    // 2. The sources the changes will write, downloaded together ahead of them (the order of changes stays).
    if (this.ctx.sources) await this.ctx.sources.prefetch(steps.filter((s) => !this.blocked(s)).flatMap((s) => sourceOf(s, this.observed)));
    // 3. The changes, each followed by its result in memory. Aborted (the run's deadline): no further
    // change starts; those made are kept as below, and the intents of those not made are settled next run.
    for (const step of steps) {
      if (this.deps.signal?.aborted) break;
      const reason = this.blocked(step);
      const record = records.get(step);
      if (reason) {
        await this.skip(step, record, reason);
        continue;
      }
      await this.execute(step, record);
    }
    // 4. The changes made durable, then the results; the downloads they used go.
    await this.ctx.syncPending();
    await this.ctx.sources?.settle();
    if (this.dirty) {
      await this.save();
      failpoint("record-written");
    }
    this.deps.signal?.throwIfAborted();
  }

  /** The record a step works on, with its intent set; null when the step needs none. */
  private async prepare(step: Step): Promise<OwnedRecord | null> {
    switch (step.kind) {
      case "fail":
        return null;
      case "noop":
      case "update": {
        const { record, resource } = step;
        // A record handed over from an id that left the declaration takes the new id.
        if (record.id !== resource.id || !sameList(record.after, resource.after)) {
          record.id = resource.id;
          setAfter(record, resource.after);
          this.dirty = true;
        }
        if (step.kind === "update") {
          record.intent = { op: "update", want: step.declared };
          this.dirty = true;
        } else if (!step.drift && !step.accept && record.applied !== step.declaredDigest) {
          record.applied = step.declaredDigest;
          this.dirty = true;
        }
        // Accepted drift is kept while it stands as accepted; back as declared, or elsewhere, it goes
        // (an update drops it once applied).
        if (step.kind === "noop" && record.accepted !== step.accept) {
          if (step.accept) record.accepted = step.accept;
          else delete record.accepted;
          this.dirty = true;
        }
        return record;
      }
      case "create": {
        const { resource } = step;
        const record: OwnedRecord = {
          id: resource.id,
          type: resource.type,
          subject: resourceSubject(resource),
          applied: step.declaredDigest,
          intent: { op: "create", want: step.declared },
        };
        setAfter(record, resource.after);
        this.ownership.records.push(record);
        this.dirty = true;
        return record;
      }
      case "adopt": {
        const { resource } = step;
        let original;
        try {
          original = await providerFor(resource.type).snapshot(subjectKey(resourceSubject(resource)), step.observed, this.ctx);
        } catch (err) {
          this.failStep(step.key, resource, err);
          return null;
        }
        failpoint("snapshot-written");
        const record: OwnedRecord = {
          id: resource.id,
          type: resource.type,
          subject: resourceSubject(resource),
          applied: step.declaredDigest,
          adopted: { original, digest: digestOf(step.observed) },
          ...(step.change ? { intent: { op: "adopt" as const, want: step.declared } } : {}),
        };
        setAfter(record, resource.after);
        this.ownership.records.push(record);
        this.dirty = true;
        return record;
      }
      case "remove": {
        step.record.intent = { op: step.record.adopted ? "restore" : "remove" };
        this.dirty = true;
        return step.record;
      }
    }
  }

  private failStep(key: string, resource: Resource | OwnedRecord, err: unknown): void {
    this.failed.add(key);
    this.fail(resource.id, err);
    const subject = "subject" in resource ? resource.subject : resourceSubject(resource);
    this.changes.push({ kind: "failed", id: resource.id, type: resource.type, subject, detail: clip(this.ctx.paths.readable(reasonOf(err))) });
  }

  private async skip(step: Step, record: OwnedRecord | undefined, reason: string): Promise<void> {
    this.skippedKeys.add(step.key);
    const id = step.kind === "remove" ? step.record.id : step.resource.id;
    this.skipped.push({ id, reason: clip(reason) });
    const subject = step.kind === "remove" ? step.record.subject : resourceSubject(step.resource);
    this.changes.push({ kind: "skipped", id, type: step.kind === "remove" ? step.record.type : step.resource.type, subject, detail: reason });
    if (step.kind === "update" && step.drift) this.noteDrift(step, false);
    // Nothing changed: the intent written for it is withdrawn.
    if (!record) return;
    if (step.kind === "create" || step.kind === "adopt") {
      this.drop(record);
      await this.dropOriginal(record);
    } else if (record.intent) {
      delete record.intent;
      this.dirty = true;
    }
  }

  private noteDrift(step: Extract<Step, { kind: "noop" | "update" }>, corrected: boolean): void {
    const d = step.drift!;
    this.drift.push({
      id: step.resource.id,
      type: step.resource.type,
      declared: d.declared,
      observed: d.observed,
      description: clip(d.description),
      corrected,
    });
    this.deps.log.info({ id: step.resource.id, drift: d.description, corrected }, "drift");
  }

  private async execute(step: Step, record: OwnedRecord | undefined): Promise<void> {
    if (step.kind === "fail") {
      this.failStep(step.key, step.resource, step.message);
      return;
    }
    if (step.kind === "noop") {
      if (step.drift) this.noteDrift(step, false);
      else this.unchanged++;
      const digest = step.drift ? step.drift.observed : step.accept ? (step.accept === "absent" ? null : step.accept) : step.declaredDigest;
      if (digest) this.digests.set(step.record.subject, digest);
      return;
    }
    if (!record) return; // an adopt whose snapshot failed: already reported
    const provider = providerFor(record.type);
    const key = subjectKey(record.subject);
    if (step.kind === "remove") {
      let outcome;
      try {
        outcome = record.adopted ? await provider.restore(key, record.adopted.original, this.ctx) : await provider.remove(key, this.ctx, record.applied);
      } catch (err) {
        await this.resolveAfterFailure(record);
        this.failStep(step.key, record, err);
        return;
      }
      failpoint("remove-before-record");
      this.forget(record.subject);
      if (outcome.kind === "kept") {
        // Still the host's: it stays recorded and is tried again on the next reconcile.
        delete record.intent;
        this.dirty = true;
        this.failed.add(step.key);
        this.fail(record.id, outcome.reason);
        this.changes.push({ kind: "kept", id: record.id, type: record.type, subject: record.subject, detail: outcome.reason });
        return;
      }
      this.drop(record);
      await this.dropOriginal(record);
      if (outcome.kind === "restored" && outcome.note) this.deps.log.warn({ id: record.id, note: outcome.note }, "restored only approximately");
      if (outcome.kind === "released") this.deps.log.info({ id: record.id, note: outcome.note }, "left in place, no longer the host's");
      this.changes.push({
        kind: outcome.kind === "released" ? "released" : record.adopted ? "restored" : "removed",
        id: record.id,
        type: record.type,
        subject: record.subject,
        ...((outcome.kind === "restored" || outcome.kind === "released") && outcome.note ? { detail: outcome.note } : {}),
      });
      return;
    }
    const { resource } = step;
    const before = this.observed.get(record.subject);
    const observed = before && "state" in before ? before.state : null;
    if (step.kind === "adopt" && !step.change) {
      this.changes.push({ kind: "adopted", id: resource.id, type: resource.type, subject: record.subject });
      return;
    }
    try {
      failpoint("before-apply");
      await provider.apply(resource, observed, this.ctx);
    } catch (err) {
      await this.resolveAfterFailure(record);
      this.failStep(step.key, resource, err);
      if (step.kind === "update" && step.drift) this.noteDrift(step, false);
      return;
    }
    failpoint("applied-before-record");
    this.forget(record.subject);
    delete record.intent;
    delete record.accepted;
    record.applied = step.declaredDigest;
    this.dirty = true;
    if (step.kind === "update" && step.drift) this.noteDrift(step, true);
    const kind = step.kind === "create" ? "created" : step.kind === "adopt" ? "adopted" : "updated";
    this.changes.push({
      kind,
      id: resource.id,
      type: resource.type,
      subject: record.subject,
      detail: step.kind === "update" ? step.drift?.description : undefined,
    });
  }

  /** A change that threw may have done part of its work: settle its intent by observing, as after a crash. */
  private async resolveAfterFailure(record: OwnedRecord): Promise<void> {
    this.forget(record.subject);
    const after = await this.look(record);
    if ("error" in after) {
      // Cannot tell: keep the record and its intent for the next reconcile to settle.
      return;
    }
    await this.settle(record);
    if (resolveIntent(record, after.state, providerFor(record.type).atomic) === "dropped") {
      this.drop(record);
      await this.dropOriginal(record);
    }
    this.dirty = true;
  }

  /** Owned is what stands on the machine now, not what was once applied. */
  async owned(declaration: Declaration | null): Promise<OwnedResource[]> {
    const declared = new Map<string, State>();
    const declaredResources = new Map((declaration?.resources ?? []).map((r) => [r.id, r]));
    const settled = this.ownership.records.filter((r) => !r.intent);
    await observeSubjects(
      settled.map((r) => ({ type: r.type, subject: r.subject, resource: declaredResources.get(r.id) ?? null })),
      this.ctx,
      this.observed,
    );
    const out: OwnedResource[] = [];
    for (const record of settled) {
      const o = await this.look(record);
      if ("error" in o) {
        if (!this.errors.some((e) => e.id === record.id)) this.fail(record.id, o.error);
        continue;
      }
      if (!o.state) continue;
      const known = this.digests.get(record.subject);
      if (known) {
        out.push({ id: record.id, type: record.type, digest: known, ...(record.adopted ? { adopted: true } : {}) });
        continue;
      }
      const resource = declaredResources.get(record.id);
      let digest = digestOf(o.state);
      if (resource && resourceSubject(resource) === record.subject) {
        let d = declared.get(record.id);
        if (!d) declared.set(record.id, (d = providerFor(resource.type).declared(resource)));
        digest = digestOf(project(o.state, d));
      }
      out.push({ id: record.id, type: record.type, digest, ...(record.adopted ? { adopted: true } : {}) });
    }
    return out;
  }
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return (a ?? []).join("\n") === (b ?? []).join("\n");
}

function setAfter(record: OwnedRecord, after: readonly string[] | undefined): void {
  if (after?.length) record.after = [...after];
  else delete record.after;
}

export function clip(message: string): string {
  return message.length > LIMITS.message ? message.slice(0, LIMITS.message - 1) + "…" : message;
}
