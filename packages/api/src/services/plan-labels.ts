// node.planLabels: what saving new labels on a node would do, without saving them: the roles
// it would gain and lose, what would happen on the machine resource by resource (create, update
// with a content diff or before/after, remove, adopt, and what will certainly fail), told from
// what its host last reported (classify-changes.ts), and the conflicts it would be in, new ones marked.
import { z } from "zod";
import { eq } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { Labels } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { compileDeclaration } from "../compile/compile-declaration";
import { COMPILABLE_STATES, loadRoles } from "./recompile-node";
import { findNewConflicts } from "./check-conflicts";
import type { ContentDiff } from "./plan-changes";
import { classifyChanges } from "./classify-changes";
import { latestReport } from "./report-store";

export const PlanLabelsInput = z.strictObject({ id: z.uuid(), labels: Labels });

export async function planLabels(deps: Pick<Deps, "db">, input: z.infer<typeof PlanLabelsInput>) {
  const [node] = await deps.db
    .select({ id: nodes.id, name: nodes.name, state: nodes.state, labels: nodes.labels, profile: nodes.profile })
    .from(nodes)
    .where(eq(nodes.id, input.id));
  if (!node) throw new MeshError("NOT_FOUND", `no node with id ${input.id}`);
  const compilable = (COMPILABLE_STATES as readonly string[]).includes(node.state);
  // Retiring, retired, revoked and pending nodes keep their declaration: labels change nothing on the machine.
  if (!compilable)
    return { nodeId: node.id, compilable, reported: false, rolesGained: [], rolesLost: [], changes: [], diffs: {}, conflicts: [], newConflicts: [] };
  const roles = await loadRoles(deps.db);
  const profile = node.profile as Record<string, unknown>;
  const before = compileDeclaration({ labels: node.labels, profile }, roles);
  const after = compileDeclaration({ labels: input.labels, profile }, roles);
  const latest = await latestReport(deps.db, node.id);
  const diffs = new Map<string, ContentDiff>();
  const check = findNewConflicts(
    [{ id: node.id, name: node.name, before: { labels: node.labels, profile }, after: { labels: input.labels, profile } }],
    roles,
    roles,
  );
  return {
    nodeId: node.id,
    compilable,
    /** Whether the host has reported: without a report the verbs come from the declarations only. */
    reported: latest !== null,
    rolesGained: after.roles.filter((r) => !before.roles.includes(r)),
    rolesLost: before.roles.filter((r) => !after.roles.includes(r)),
    changes: classifyChanges(before.resources, after.resources, latest?.report ?? null, diffs).filter((c) => c.action !== "unchanged"),
    diffs: Object.fromEntries(diffs),
    /** Every conflict the node would be in (a node in conflict gets nothing new). */
    conflicts: after.conflicts,
    /** Those it is not in now: saving them needs confirmConflicts. */
    newConflicts: check.conflicts.map((c) => ({ key: c.key, roles: c.roles })),
  };
}
