// What changed between two versions of a role: its selector, grants and revoke-offline policy before
// and after, and its resources created, updated (with a line diff for inline text content) or removed,
// by id. The full diff the role page's version diff shows; the audit record of a save is the bounded
// role-change-record.ts.
import { canonicalJson, type Role } from "@mesh/protocol";
import { planChanges, type ContentDiff, type PlannedChange } from "./plan-changes";

export interface RoleDiff {
  /** Present when the selector changed (null: the role did not exist on that side). */
  selector?: { before: Role["selector"] | null; after: Role["selector"] | null };
  /** Present when the grants changed. */
  grants?: { before: Role["grants"]; after: Role["grants"] };
  /** Present when the revoke-offline policy changed (minutes; null: never). */
  revokeOfflineAfter?: { before: number | null; after: number | null };
  resources: PlannedChange[];
  /** Content diffs named by `resources[].diff`. */
  diffs: Record<string, ContentDiff>;
}

/** `before` null: the role is new; `after` null: it is deleted. */
export function roleDiff(before: Role | null, after: Role | null): RoleDiff {
  const diffs = new Map<string, ContentDiff>();
  const resources = planChanges(before?.resources ?? [], after?.resources ?? [], diffs);
  const diff: RoleDiff = { resources, diffs: Object.fromEntries(diffs) };
  if (canonicalJson(before?.selector ?? null) !== canonicalJson(after?.selector ?? null))
    diff.selector = { before: before?.selector ?? null, after: after?.selector ?? null };
  if (canonicalJson(before?.grants ?? []) !== canonicalJson(after?.grants ?? [])) diff.grants = { before: before?.grants ?? [], after: after?.grants ?? [] };
  const revoke = (r: Role | null) => r?.revokeOfflineAfter ?? null;
  if (revoke(before) !== revoke(after)) diff.revokeOfflineAfter = { before: revoke(before), after: revoke(after) };
  return diff;
}
