// What a role.upsert changed, as its audit event records it (role-diff.ts is the full diff the role
// page shows between two versions; this is its bounded form for an event) (issue 13: "the role's change recorded, a
// diff, not {resources: 2}"): the selector and policy before and after when they changed; resources
// and grants added, removed and changed by id, with the fields that changed; a changed text content
// as a unified diff. Compact and bounded: at most DIFF_BYTES of content diff per event and ID_LIST
// ids per list, the rest cut and the diff marked `truncated`. Content is redacted for callers who may
// not see it (redactRoleChangeRecord), as role.list redacts it.
import { canonicalJson, resourceSubject, type Resource } from "@mesh/protocol";
import { contentDiff, textContent, type ContentDiff } from "./plan-changes";

/** Bytes of unified-diff lines one event carries, all content changes together. */
export const DIFF_BYTES = 8 * 1024;
/** Ids one list (added, removed, changed) names; `more` counts the rest. */
export const ID_LIST = 200;

export interface RoleSnapshot {
  selector: unknown;
  resources: Resource[];
  grants: Array<{ id: string }>;
  revokeOfflineAfter: number | null;
}

export interface ChangedResource {
  id: string;
  type: string;
  subject: string;
  /** Top-level fields whose value changed (added or removed fields too). */
  fields: string[];
  /** The content's unified diff, when a text content changed (absent for viewers: `contentHidden`). */
  content?: ContentDiff;
  contentHidden?: true;
}

interface Listed<T> {
  items: T[];
  more: number;
}

export interface RoleChangeRecord {
  /** The role did not exist before. */
  created?: true;
  selector?: { before: unknown; after: unknown };
  revokeOfflineAfter?: { before: number | null; after: number | null };
  resources: {
    added: Listed<{ id: string; type: string; subject: string }>;
    removed: Listed<{ id: string; type: string; subject: string }>;
    changed: Listed<ChangedResource>;
  };
  grants?: { added: string[]; removed: string[]; changed: string[] };
  /** Something was left out to keep the event small (content lines or ids). */
  truncated?: true;
}

const listed = <T>(all: T[]): Listed<T> => ({ items: all.slice(0, ID_LIST), more: Math.max(0, all.length - ID_LIST) });
const brief = (r: Resource) => ({ id: r.id, type: r.type, subject: resourceSubject(r) });

function changedFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.filter((k) => canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null)).sort();
}

/** The diff of a role from `before` (null: a new role) to `after`. */
export function roleChangeRecord(before: RoleSnapshot | null, after: RoleSnapshot): RoleChangeRecord {
  const was = before ?? { selector: {}, resources: [], grants: [], revokeOfflineAfter: null };
  const diff: RoleChangeRecord = { resources: { added: listed([]), removed: listed([]), changed: listed([]) } };
  if (!before) diff.created = true;
  if (canonicalJson(was.selector) !== canonicalJson(after.selector)) diff.selector = { before: was.selector, after: after.selector };
  if (was.revokeOfflineAfter !== after.revokeOfflineAfter) diff.revokeOfflineAfter = { before: was.revokeOfflineAfter, after: after.revokeOfflineAfter };

  const old = new Map(was.resources.map((r) => [r.id, r]));
  const added: Resource[] = [];
  const changed: ChangedResource[] = [];
  let budget = DIFF_BYTES;
  let truncated = false;
  for (const r of after.resources) {
    const o = old.get(r.id);
    old.delete(r.id);
    if (!o) {
      added.push(r);
      continue;
    }
    const fields = changedFields(o as Record<string, unknown>, r as Record<string, unknown>);
    if (fields.length === 0) continue;
    const entry: ChangedResource = { ...brief(r), fields };
    const [a, b] = [textContent(o), textContent(r)];
    if (fields.includes("content") && a !== null && b !== null) {
      const full = contentDiff(a, b);
      const lines: string[] = [];
      for (const line of full.lines) {
        const size = Buffer.byteLength(line, "utf8") + 1;
        if (size > budget) break;
        budget -= size;
        lines.push(line);
      }
      const omitted = full.omitted + full.lines.length - lines.length;
      if (omitted > 0) truncated = true;
      entry.content = { lines, omitted };
    }
    changed.push(entry);
  }
  diff.resources = { added: listed(added.map(brief)), removed: listed([...old.values()].map(brief)), changed: listed(changed) };
  if (diff.resources.added.more || diff.resources.removed.more || diff.resources.changed.more) truncated = true;

  const oldGrants = new Map(was.grants.map((g) => [g.id, g]));
  const grants = { added: [] as string[], removed: [] as string[], changed: [] as string[] };
  for (const g of after.grants) {
    const o = oldGrants.get(g.id);
    oldGrants.delete(g.id);
    if (!o) grants.added.push(g.id);
    else if (canonicalJson(o) !== canonicalJson(g)) grants.changed.push(g.id);
  }
  grants.removed = [...oldGrants.keys()];
  if (grants.added.length || grants.removed.length || grants.changed.length) diff.grants = grants;
  if (truncated) diff.truncated = true;
  return diff;
}

/** The diff as a caller who may not see inline content sees it: content diffs left out, marked hidden. */
export function redactRoleChangeRecord(data: unknown): unknown {
  if (!data || typeof data !== "object" || !("diff" in data)) return data;
  const d = (data as { diff?: RoleChangeRecord }).diff;
  if (!d?.resources?.changed?.items) return data;
  const items = d.resources.changed.items.map(({ content, ...rest }) => (content ? { ...rest, contentHidden: true as const } : rest));
  return { ...data, diff: { ...d, resources: { ...d.resources, changed: { ...d.resources.changed, items } } } };
}
