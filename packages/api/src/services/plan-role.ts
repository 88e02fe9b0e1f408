// role.plan: what saving a role would do, without saving it. Compiles every node
// that can receive a declaration with the roles as they are and as they would be,
// and lists per node the resources created, updated and removed.
import { inArray } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { Role, type RoleInput } from "@mesh/protocol";
import type { Deps } from "../deps";
import { compileDeclaration, type Conflict } from "../compile/compile-declaration";
import { matchesSelector } from "../compile/selector";
import { COMPILABLE_STATES, loadRoles } from "./recompile-node";
import { grantSelectorViolation } from "../compile/grant-selector-rule";
import { MeshError } from "../errors";
import { planChanges, type ContentDiff, type PlannedChange } from "./plan-changes";

export type { PlannedChange } from "./plan-changes";

export interface NodePlan {
  nodeId: string;
  name: string;
  changes: PlannedChange[];
  conflicts: Conflict[];
}

const NODES_SHOWN = 200;

export async function planRole(deps: Pick<Deps, "db">, opts: { input: RoleInput; remove?: boolean }) {
  const role = Role.parse(opts.input);
  const violation = opts.remove ? null : grantSelectorViolation(role);
  if (violation) throw new MeshError("BAD_INPUT", violation);
  const current = await loadRoles(deps.db);
  const next = [...current.filter((r) => r.name !== role.name), ...(opts.remove ? [] : [role])];
  const fleet = await deps.db
    .select({ id: nodes.id, name: nodes.name, labels: nodes.labels, profile: nodes.profile })
    .from(nodes)
    .where(inArray(nodes.state, [...COMPILABLE_STATES]))
    .orderBy(nodes.name);
  const plans: NodePlan[] = [];
  const matched: Array<{ id: string; name: string }> = [];
  let matchedCount = 0;
  let changedCount = 0;
  const diffs = new Map<string, ContentDiff>();
  for (const node of fleet) {
    const facts = { labels: node.labels, profile: node.profile as Record<string, unknown> };
    if (matchesSelector(role.selector, facts)) {
      matchedCount++;
      if (matched.length < NODES_SHOWN) matched.push({ id: node.id, name: node.name });
    }
    const before = compileDeclaration(facts, current);
    const after = compileDeclaration(facts, next);
    const changes = planChanges(before.resources, after.resources, diffs);
    if (changes.length === 0 && after.conflicts.length === 0) continue;
    changedCount++;
    if (plans.length < NODES_SHOWN) plans.push({ nodeId: node.id, name: node.name, changes, conflicts: after.conflicts });
  }
  // Only the content diffs the listed nodes name.
  const shown = new Set(plans.flatMap((p) => p.changes.flatMap((c) => (c.diff ? [c.diff] : []))));
  return {
    role: role.name,
    exists: current.some((r) => r.name === role.name),
    matchedCount,
    matched,
    changedCount,
    nodes: plans,
    diffs: Object.fromEntries([...diffs].filter(([k]) => shown.has(k))),
  };
}
