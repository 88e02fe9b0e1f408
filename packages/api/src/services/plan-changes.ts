// What moving a node from one compiled declaration to another changes, resource by resource;
// an updated file or unit with inline text content carries a small line diff, stored once per
// distinct (before, after) pair however many nodes share it.
import { structuredPatch } from "diff";
import { canonicalJson, resourceSubject, type Resource } from "@mesh/protocol";
import { contentHash } from "../compile/hash";

export interface PlannedChange {
  id: string;
  type: string;
  subject: string;
  action: "create" | "update" | "remove";
  /** Key into the plan's `diffs` when the content of a file or unit changed. */
  diff?: string;
}

export interface ContentDiff {
  /** Unified-diff lines: "@@ …" hunk heads, then lines starting with " ", "-" or "+". */
  lines: string[];
  /** Lines left out past the limit. */
  omitted: number;
}

/** Lines of diff kept per content change: a plan is read, not applied. */
const DIFF_LINES = 400;

export function textContent(r: Resource): string | null {
  if (r.type === "file") return r.content !== undefined && r.encoding === "utf8" ? r.content : null;
  if (r.type === "service") return r.content ?? null;
  return null;
}

export function contentDiff(before: string, after: string): ContentDiff {
  const patch = structuredPatch("before", "after", before, after, undefined, undefined, { context: 3 });
  const lines = patch.hunks.flatMap((h) => [`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines]);
  return { lines: lines.slice(0, DIFF_LINES), omitted: Math.max(0, lines.length - DIFF_LINES) };
}

export function planChanges(before: Resource[], after: Resource[], diffs: Map<string, ContentDiff>): PlannedChange[] {
  const was = new Map(before.map((r) => [r.id, r]));
  const changes: PlannedChange[] = [];
  for (const r of after) {
    const old = was.get(r.id);
    was.delete(r.id);
    const base = { id: r.id, type: r.type, subject: resourceSubject(r) };
    if (!old) changes.push({ ...base, action: "create" });
    else if (canonicalJson(old) !== canonicalJson(r)) {
      const [a, b] = [textContent(old), textContent(r)];
      if (a === null || b === null || a === b) changes.push({ ...base, action: "update" });
      else {
        const key = contentHash([a, b]);
        if (!diffs.has(key)) diffs.set(key, contentDiff(a, b));
        changes.push({ ...base, action: "update", diff: key });
      }
    }
  }
  for (const r of was.values()) changes.push({ id: r.id, type: r.type, subject: resourceSubject(r), action: "remove" });
  return changes;
}
