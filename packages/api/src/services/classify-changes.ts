// Pure: what moving a node from its last declaration to a proposed one does ON THE MACHINE, told
// from what its host last reported it owns and observes (decision 0039):
//   create     proposed, and the host does not own it: it will be made (or taken over, if
//              something stands there: a report lists only what the host owns, so it cannot say)
//   update     proposed, the host owns it, and what it observed is not the proposal: it will change
//   adopt      proposed and newly (or differently) declared, but the host owns it and observed it
//              exactly as proposed: the declaration takes it as it is, nothing on the machine changes
//   remove     no longer declared, and the host owns it: removed (or restored, if it was adopted)
//   unchanged  its declaration does not change, or it leaves the declaration but the host owns
//              nothing there: the save does nothing to it
// Plus what will certainly fail: a path whose parent directory the host reported missing at its
// last reconcile (its error "parent directory of … does not exist"), with no directory proposed
// there. Any other error the host reported for the resource is carried as `failedLastTime`.
// Without a report (a host that never reported) the verbs come from the declarations alone.
import { dirname } from "node:path";
import { canonicalJson, resourceSubject, type Resource } from "@mesh/protocol";
import type { ReportBody } from "./report-store";
import { declaredState, stateDigest, type DeclaredState, type DeclaredValue } from "./declared-state";
import { contentDiff, textContent, type ContentDiff } from "./plan-changes";
import { contentHash } from "../compile/hash";

export type MachineVerb = "create" | "update" | "remove" | "adopt" | "unchanged";

export interface FieldChange {
  key: string;
  before: DeclaredValue;
  after: DeclaredValue;
}

export interface MachineChange {
  id: string;
  type: string;
  subject: string;
  action: MachineVerb;
  /** Key into the plan's `diffs`: the content as the host has it (known: it reported the last declared content) against the proposal. */
  diff?: string;
  /** An update: mode, owner, version, enabled, running… as the host observed them (its last declared state, confirmed by its digest) and as proposed. */
  fields?: FieldChange[];
  /** An update whose observed state differs from its last declaration too (drift): what the host said, the exact "before" is unknown. */
  observed?: string;
  /** It will certainly fail, and why. */
  fails?: string;
  /** The host's error for this resource at its last reconcile. */
  failedLastTime?: string;
  /** A removal that puts back what stood there before the host adopted it. */
  restores?: boolean;
}

/** What the plan needs of a report: the host's `owned`, `drift` and `errors`. */
export type ReportedMachine = Pick<ReportBody, "owned" | "drift" | "errors">;

const MISSING_PARENT = /parent directory of (\/\S*) does not exist/;
const CONTENT_KEYS = new Set(["sha256", "unitFileSha256"]);
const NAMING_KEYS = new Set(["type", "path", "name", "unit"]);

function pathOf(r: Resource): string | null {
  return r.type === "file" || r.type === "directory" || r.type === "symlink" ? r.path : null;
}

/** Directories the host found missing under its declared paths: the parent of each path whose error said so. */
export function missingParents(report: ReportedMachine | null): Set<string> {
  const out = new Set<string>();
  for (const e of report?.errors ?? []) {
    const m = MISSING_PARENT.exec(e.message);
    if (m) out.add(dirname(m[1]!));
  }
  return out;
}

function fieldChanges(before: DeclaredState, after: DeclaredState): FieldChange[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const out: FieldChange[] = [];
  for (const key of keys) {
    if (NAMING_KEYS.has(key) || CONTENT_KEYS.has(key)) continue;
    const [b, a] = [before[key] ?? null, after[key] ?? null];
    if (b !== a) out.push({ key, before: b, after: a });
  }
  return out;
}

function withDiff(change: MachineChange, old: Resource | undefined, r: Resource, diffs: Map<string, ContentDiff>): MachineChange {
  const [a, b] = [old ? textContent(old) : null, textContent(r)];
  if (a === null || b === null || a === b) return change;
  const key = contentHash([a, b]);
  if (!diffs.has(key)) diffs.set(key, contentDiff(a, b));
  return { ...change, diff: key };
}

export function classifyChanges(before: Resource[], after: Resource[], report: ReportedMachine | null, diffs: Map<string, ContentDiff>): MachineChange[] {
  const was = new Map(before.map((r) => [r.id, r]));
  const owned = new Map((report?.owned ?? []).map((o) => [o.id, o]));
  const drift = new Map((report?.drift ?? []).map((d) => [d.id, d]));
  const errors = new Map((report?.errors ?? []).flatMap((e) => (e.id && !MISSING_PARENT.test(e.message) ? [[e.id, e.message] as const] : [])));
  const missing = missingParents(report);
  const proposedDirs = new Set(after.flatMap((r) => (r.type === "directory" ? [r.path] : [])));
  const out: MachineChange[] = [];
  for (const r of after) {
    const old = was.get(r.id);
    was.delete(r.id);
    const base = { id: r.id, type: r.type, subject: resourceSubject(r) };
    if (old && canonicalJson(old) === canonicalJson(r)) {
      out.push({ ...base, action: "unchanged" });
      continue;
    }
    let change: MachineChange;
    const held = owned.get(r.id);
    if (!report) change = withDiff({ ...base, action: old ? "update" : "create" }, old, r, diffs);
    else if (!held) change = { ...base, action: "create" };
    else {
      const want = declaredState(r);
      if (held.digest === stateDigest(want)) change = { ...base, action: "adopt" };
      else {
        const last = old ? declaredState(old) : null;
        if (last && held.digest === stateDigest(last)) {
          // The host holds it as last declared: its mode, owner, content… are known.
          const fields = fieldChanges(last, want);
          change = withDiff({ ...base, action: "update", ...(fields.length ? { fields } : {}) }, old, r, diffs);
        } else change = { ...base, action: "update", observed: drift.get(r.id)?.description ?? "differs from its last declaration" };
      }
    }
    const path = pathOf(r);
    if (change.action === "create" && path && missing.has(dirname(path)) && !proposedDirs.has(dirname(path))) {
      change.fails = `parent directory ${dirname(path)} missing at the last report`;
    }
    const error = errors.get(r.id);
    if (error && change.action !== "adopt") change.failedLastTime = error;
    out.push(change);
  }
  for (const r of was.values()) {
    const base = { id: r.id, type: r.type, subject: resourceSubject(r) };
    const held = owned.get(r.id);
    if (!report || held) out.push({ ...base, action: "remove", ...(held?.adopted ? { restores: true } : {}) });
    else out.push({ ...base, action: "unchanged" });
  }
  return out;
}
