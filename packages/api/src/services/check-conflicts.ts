// Conflicts caught before they are saved (issue 13): what a proposed role change or label
// change would newly put into conflict, computed set-based. The compiler runs once per
// distinct pair (roles matched before, roles matched after), as recompile-fleet does, never
// once per node; the nodes are read in one query. A role save checks on the fleet its compile
// then uses (checkRoleOnFleet): one read of the nodes and roles, one compile per distinct set of
// matched role versions for both.
// A node already in conflict does not block a change unless the change adds a conflict it
// did not have (a new resource key, or the same key between another pair of roles).
import { profileFacts } from "./profile-facts";
import { inArray, sql } from "drizzle-orm";
import { nodes, type DbOrTx } from "@mesh/db";
import type { Labels, Role } from "@mesh/protocol";
import { compileDeclaration, type Conflict } from "../compile/compile-declaration";
import { matchesSelector, type NodeFacts } from "../compile/selector";
import { MeshError } from "../errors";
import { COMPILABLE_STATES, loadRoles, type VersionedRole } from "./recompile-node";
import { CompileCache, loadFleet, withRole, type FleetCompiled, type LoadedFleet } from "./recompile-fleet";
import { shownName } from "./node-name";

/** Node names given per conflict (the count says how many nodes there are in all). */
const NAMES_PER_CONFLICT = 5;
/** Distinct conflicts named in a refusal's message. */
const CONFLICTS_IN_MESSAGE = 5;

/** What a save proposes: one role as it would be saved, or new labels for some nodes (one node, or a bulk edit). */
export type ProposedChange = { role: Role } | { labels: Array<{ id: string; labels: Labels }> };

export interface ConflictFinding {
  /** The resource id or subject (path, package, unit) declared differently. */
  key: string;
  roles: [string, string];
  /** Nodes the change puts into this conflict. */
  nodes: number;
  /** A few of them, by the name shown (the display name, else the hostname). */
  sample: Array<{ id: string; name: string }>;
}

export interface ConflictCheck {
  /** Nodes that would get at least one conflict they do not have now. */
  nodes: number;
  conflicts: ConflictFinding[];
}

interface Candidate {
  id: string;
  name: string;
  before: NodeFacts;
  after: NodeFacts;
}

const identity = (c: Conflict) => `${c.key}\u0000${[...c.roles].sort().join("\u0000")}`;

function matchedKey(facts: NodeFacts, roles: Role[]): string {
  let key = "";
  for (const role of roles) key += matchesSelector(role.selector, facts) ? "1" : "0";
  return key;
}

/** The new conflicts of every candidate, one compile pair per distinct (matched before, matched after). */
export function findNewConflicts(candidates: Candidate[], rolesBefore: Role[], rolesAfter: Role[], compile = compileDeclaration): ConflictCheck {
  const byGroup = new Map<string, Conflict[]>();
  const findings = new Map<string, ConflictFinding>();
  let count = 0;
  for (const node of candidates) {
    const group = matchedKey(node.before, rolesBefore) + "|" + matchedKey(node.after, rolesAfter);
    let added = byGroup.get(group);
    if (!added) {
      const had = new Set(compile(node.before, rolesBefore).conflicts.map(identity));
      added = compile(node.after, rolesAfter).conflicts.filter((c) => !had.has(identity(c)));
      byGroup.set(group, added);
    }
    if (added.length === 0) continue;
    count++;
    for (const c of added) {
      const id = identity(c);
      let finding = findings.get(id);
      if (!finding) findings.set(id, (finding = { key: c.key, roles: c.roles, nodes: 0, sample: [] }));
      finding.nodes++;
      if (finding.sample.length < NAMES_PER_CONFLICT) finding.sample.push({ id: node.id, name: node.name });
    }
  }
  return { nodes: count, conflicts: [...findings.values()].sort((a, b) => b.nodes - a.nodes || a.key.localeCompare(b.key)) };
}

/** Only the profile facts selectors read (a profile is most of a node row's width). */
function profileSubset(roles: Role[]) {
  return profileFacts(roles.map((r) => r.selector));
}

/**
 * What saving `proposed` (the role at the version it would get) would newly put into conflict, judged on
 * `fleet` (loadFleet: read once, under the compiler lock) with the newest roles, not the pinned ones. The
 * compiles land in `cache`, which the save's recompileFleet then reuses: a node whose matched role
 * versions do not change costs no second compile. The nodes are named (one query, in shown-name order, as
 * a refusal always named them) only when there are new conflicts. Writes nothing.
 */
export async function checkRoleOnFleet(db: DbOrTx, fleet: LoadedFleet, proposed: VersionedRole, cache: CompileCache): Promise<ConflictCheck> {
  const before = fleet.roles;
  const after = withRole(fleet.roles, proposed);
  const compile = (facts: NodeFacts, roles: Role[]) => cache.of(facts, roles as VersionedRole[]);
  // Whether a (before, after) pair of compiles adds a conflict: judged once per distinct pair.
  const adds = new Map<FleetCompiled, Map<FleetCompiled, boolean>>();
  const conflicted = new Map<string, NodeFacts>();
  for (const node of fleet.nodes) {
    const facts = { labels: node.labels, profile: node.profile };
    const had = compile(facts, before);
    const now = compile(facts, after);
    if (had === now || now.conflicts.length === 0) continue;
    let byNow = adds.get(had);
    if (!byNow) adds.set(had, (byNow = new Map()));
    let added = byNow.get(now);
    if (added === undefined) {
      const hadIds = new Set(had.conflicts.map(identity));
      byNow.set(now, (added = now.conflicts.some((c) => !hadIds.has(identity(c)))));
    }
    if (added) conflicted.set(node.id, facts);
  }
  if (conflicted.size === 0) return { nodes: 0, conflicts: [] };
  const named = await db
    .select({ id: nodes.id, name: shownName })
    .from(nodes)
    .where(sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify([...conflicted.keys()])}::jsonb)::uuid)`)
    .orderBy(shownName, nodes.id);
  const candidates = named.map((n) => ({ id: n.id, name: n.name, before: conflicted.get(n.id)!, after: conflicted.get(n.id)! }));
  return findNewConflicts(candidates, before, after, compile);
}

/**
 * What the proposed change would newly put into conflict, against the roles and labels stored
 * now. Call inside the saving transaction after taking the compiler lock, so the answer holds
 * at commit. Nodes that cannot receive a declaration (pending, retiring, retired, revoked) are
 * not compiled and never conflict. (A role save that compiles the fleet next uses checkRoleOnFleet.)
 */
export async function checkConflicts(db: DbOrTx, change: ProposedChange): Promise<ConflictCheck> {
  if ("role" in change) {
    // Read without locking: a caller that compiles next locks the rows in its own order.
    const fleet = await loadFleet(db, { selectors: [change.role.selector], lock: false });
    // A version no stored one has: its compiles are its own in this cache.
    return checkRoleOnFleet(db, fleet, { ...change.role, version: -1 }, new CompileCache());
  }
  const current = await loadRoles(db);
  if (change.labels.length === 0) return { nodes: 0, conflicts: [] };
  const proposed = new Map(change.labels.map((l) => [l.id, l.labels]));
  // The ids as one parameter: a bulk edit of the whole fleet stays one short statement.
  const rows = await db
    .select({ id: nodes.id, name: shownName, labels: nodes.labels, profile: profileSubset(current) })
    .from(nodes)
    .where(
      sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify([...proposed.keys()])}::jsonb)::uuid) and ${inArray(nodes.state, [...COMPILABLE_STATES])}`,
    )
    .orderBy(shownName, nodes.id);
  const candidates = rows.map((n) => {
    const profile = n.profile as Record<string, unknown>;
    return { id: n.id, name: n.name, before: { labels: n.labels, profile }, after: { labels: proposed.get(n.id)!, profile } };
  });
  return findNewConflicts(candidates, current, current);
}

/** The conflicts named in words: which resource, which roles, how many nodes, a few names. */
export function describeConflicts(check: ConflictCheck): string {
  const named = check.conflicts.slice(0, CONFLICTS_IN_MESSAGE).map((c) => {
    const names = c.sample.map((s) => s.name).join(", ");
    const more = c.nodes > c.sample.length ? ` and ${c.nodes - c.sample.length} more` : "";
    return `${c.key} is declared differently by roles ${c.roles[0]} and ${c.roles[1]} on ${c.nodes} node${c.nodes === 1 ? "" : "s"} (${names}${more})`;
  });
  const rest = check.conflicts.length > CONFLICTS_IN_MESSAGE ? `; and ${check.conflicts.length - CONFLICTS_IN_MESSAGE} more conflicts` : "";
  return `this would put ${check.nodes} node${check.nodes === 1 ? "" : "s"} into conflict: ${named.join("; ")}${rest}. A node in conflict gets nothing new until it is resolved; send confirmConflicts: true to save anyway`;
}

/** Throws CONFLICT, naming the conflicts (and carrying them as details), unless there are none or the admin confirmed. */
export function refuseNewConflicts(check: ConflictCheck, confirmed: boolean | undefined): void {
  if (check.nodes === 0 || confirmed) return;
  throw new MeshError("CONFLICT", describeConflicts(check), undefined, { conflicts: check.conflicts, nodes: check.nodes });
}
