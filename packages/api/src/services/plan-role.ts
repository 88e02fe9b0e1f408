// role.plan: what saving a role would do, without saving it. Each node's declaration as the roles
// are and as they would be, compiled once per distinct matched-role set (the compile is a pure
// function of the matched roles, as in recompile-fleet.ts), compared with what its host last
// reported it owns and observes (classify-changes.ts), read for the whole fleet in one statement.
// Nodes with the same changes form one group: readable at 10,000 nodes.
import { inArray } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { Role, type RoleInput } from "@mesh/protocol";
import type { Deps } from "../deps";
import { compileDeclaration, type CompiledDeclaration, type Conflict } from "../compile/compile-declaration";
import { matchesSelector, type NodeFacts } from "../compile/selector";
import { COMPILABLE_STATES, loadRoles } from "./recompile-node";
import { grantSelectorViolation } from "../compile/grant-selector-rule";
import { MeshError } from "../errors";
import type { ContentDiff } from "./plan-changes";
import { classifyChanges, type MachineChange } from "./classify-changes";
import { latestBodiesOf } from "./report-store";
import { allAtOnceWarning, groupKey, planSummary, PlanGrouper, type GroupShape } from "./plan-groups";

export type { MachineChange as PlannedChange } from "./classify-changes";

export interface NodePlan {
  nodeId: string;
  name: string;
  changes: MachineChange[];
  conflicts: Conflict[];
}

const NODES_SHOWN = 200;

/** Nothing happens on the machine: one group, reported or not. */
const EMPTY: GroupShape = { changes: [], conflicts: [], reported: true };
const EMPTY_KEY = groupKey(EMPTY);

/** One compile per matched-role key (which of `roles` match: see recompile-fleet.ts), made on first use. */
function compiler(roles: Role[]) {
  const byKey = new Map<string, CompiledDeclaration>();
  return (key: string, facts: NodeFacts) => {
    let compiled = byKey.get(key);
    if (!compiled) byKey.set(key, (compiled = compileDeclaration(facts, roles)));
    return { key, compiled };
  };
}

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
  const [before, after] = [compiler(current), compiler(next)];
  const matched: Array<{ id: string; name: string }> = [];
  let matchedCount = 0;
  // Pass 1, no database: each node's pair of compiles; the nodes whose declaration would change.
  const changing: Array<{ node: (typeof fleet)[number]; pair: string; was: CompiledDeclaration; will: CompiledDeclaration }> = [];
  const unchanged: Array<(typeof fleet)[number]> = [];
  // The next roles are the current ones less the planned role, plus it: each selector is evaluated once per node.
  const at = current.findIndex((r) => r.name === role.name);
  for (const node of fleet) {
    const facts = { labels: node.labels, profile: node.profile as Record<string, unknown> };
    let was = "";
    let will = "";
    for (let i = 0; i < current.length; i++) {
      const bit = matchesSelector(current[i]!.selector, facts) ? "1" : "0";
      was += bit;
      if (i !== at) will += bit;
    }
    const matches = matchesSelector(role.selector, facts);
    if (!opts.remove) will += matches ? "1" : "0";
    if (matches) {
      matchedCount++;
      if (matched.length < NODES_SHOWN) matched.push({ id: node.id, name: node.name });
    }
    const wasCompiled = before(was, facts);
    const willCompiled = after(will, facts);
    if (wasCompiled.compiled.hash === willCompiled.compiled.hash && willCompiled.compiled.conflicts.length === 0) unchanged.push(node);
    else changing.push({ node, pair: `${was}|${will}`, was: wasCompiled.compiled, will: willCompiled.compiled });
  }
  // One statement for the reports of every node that would change.
  const { bodyOf, bodies } = await latestBodiesOf(
    deps.db,
    changing.map((c) => c.node.id),
  );
  // Pass 2: classify once per (pair of compiles, report body): nodes alike in both share it.
  const diffs = new Map<string, ContentDiff>();
  const shapes = new Map<string, { key: string; shape: GroupShape }>();
  const grouper = new PlanGrouper();
  const plans: NodePlan[] = [];
  let declarationChanges = 0;
  for (const { node, pair, was, will } of changing) {
    const body = bodyOf.get(node.id) ?? null;
    const memo = `${pair}|${body ?? "-"}`;
    let entry = shapes.get(memo);
    if (!entry) {
      const report = body ? (bodies.get(body) ?? null) : null;
      const changes = classifyChanges(was.resources, will.resources, report, diffs).filter((c) => c.action !== "unchanged");
      const shape = changes.length || will.conflicts.length ? { changes, conflicts: will.conflicts, reported: report !== null } : EMPTY;
      shapes.set(memo, (entry = { key: groupKey(shape), shape }));
    }
    grouper.add(entry.key, entry.shape, { id: node.id, name: node.name });
    if (was.hash !== will.hash) declarationChanges++;
    if (plans.length < NODES_SHOWN && (entry.shape.changes.length || entry.shape.conflicts.length)) {
      plans.push({ nodeId: node.id, name: node.name, changes: entry.shape.changes, conflicts: entry.shape.conflicts });
    }
  }
  // Nodes whose declaration stays as it is: the unchanged group, whatever their reports say.
  for (const node of unchanged) grouper.add(EMPTY_KEY, EMPTY, { id: node.id, name: node.name });
  const groups = grouper.list();
  // Only the content diffs the groups name.
  const named = new Set(groups.flatMap((g) => g.changes.flatMap((c) => (c.diff ? [c.diff] : []))));
  const changedCount = groups.reduce((n, g) => n + (g.changes.length || g.conflicts.length ? g.count : 0), 0);
  return {
    role: role.name,
    exists: current.some((r) => r.name === role.name),
    matchedCount,
    matched,
    /** Nodes on which saving does something (or would, but for a conflict). */
    changedCount,
    /** Nodes whose declaration changes (some only in what the host already has: adopt). */
    declarationChanges,
    /** The first changed nodes, each with its changes (the groups say the same for the whole fleet). */
    nodes: plans,
    groups,
    summary: planSummary(groups),
    allAtOnceWarning: allAtOnceWarning(changedCount),
    diffs: Object.fromEntries([...diffs].filter(([k]) => named.has(k))),
  };
}
