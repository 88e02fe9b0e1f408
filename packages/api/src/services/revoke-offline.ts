// The revoke-when-offline policy (issue 13): a role may say how long its nodes may stay disconnected
// (roles.revoke_offline_minutes; null, the default, is off). A node that has been disconnected longer
// than the smallest limit among the roles whose selector it matches is revoked by the control plane:
// the same revocation as the dashboard's (bulk-actions.ts revokeSet: key refused, link closed, grants
// cut off at their providers by the settler), ONE audit event per sweep naming the nodes, roles and
// limits (node.bulk-revoke, so the alert webhooks' "revoked" event fires for them).
//
// Once per control plane (sweep-lease.ts), in set-based statements: a fixed handful find and lock the
// nodes due (at most MAX_NODES_PER_CALL a sweep; the rest are due again next sweep), then revokeSet's.
// Only `disconnected` nodes that were seen once count: a never-linked node (health `pending`), a
// replacement claim (state `pending`), a linked node (`enrolled`) and retiring nodes are never revoked here.
import { profileFacts } from "./profile-facts";
import { and, eq, isNotNull, sql } from "drizzle-orm";
import { nodes, notify, roles, CHANNELS, MANY_NODES, type DbOrTx } from "@mesh/db";
import { Selector } from "@mesh/protocol";
import type { Deps } from "../deps";
import { ACTOR } from "../auth/actor";
import { matchesSelector } from "../compile/selector";
import { revokeSet } from "./bulk-actions";
import { MAX_NODES_PER_CALL } from "./node-set";
import { recordEvent } from "./record-event";
import { shownName } from "./node-name";
import { withSweepLease } from "./sweep-lease";

export const REVOKE_OFFLINE_LEASE = "revoke-offline";

interface Due {
  id: string;
  name: string;
  minutes: number;
  roles: string[];
  lastSeenAt: string;
}

interface PolicyRole {
  name: string;
  selector: Selector;
  minutes: number;
}

/**
 * The nodes due, locked in id order (the order the presence and report batches lock in). Three
 * statements whatever the fleet's size: the policy roles (none: done); the disconnected nodes seen
 * once and offline longer than the smallest limit of any policy role, with their labels and the profile
 * facts the selectors read, matched here by the compiler's own matcher (compile/selector.ts); then the
 * due ones locked, each checked again on its locked row (still disconnected, last seen unchanged), so a
 * node that linked meanwhile is left.
 */
async function lockDue(tx: DbOrTx, now: Date): Promise<Due[]> {
  const policy: PolicyRole[] = (
    await tx
      .select({ name: roles.name, selector: roles.selector, minutes: roles.revokeOfflineMinutes })
      .from(roles)
      .where(isNotNull(roles.revokeOfflineMinutes))
      .orderBy(roles.name)
  ).map((r) => ({ name: r.name, selector: Selector.parse(r.selector), minutes: r.minutes! }));
  if (policy.length === 0) return [];
  const smallest = Math.min(...policy.map((r) => r.minutes));
  const profile = profileFacts(policy.map((r) => r.selector));
  const offline = await tx
    .select({
      id: nodes.id,
      labels: nodes.labels,
      profile,
      // ISO 8601 text to the microsecond: compared again, exactly, on the locked row.
      lastSeenAt: sql<string>`to_json(${nodes.lastSeenAt}) #>> '{}'`,
      offlineMinutes: sql<number>`extract(epoch from (${now.toISOString()}::timestamptz - ${nodes.lastSeenAt})) / 60`.mapWith(Number),
    })
    .from(nodes)
    .where(and(eq(nodes.state, "disconnected"), sql`${nodes.lastSeenAt} <= ${now.toISOString()}::timestamptz - make_interval(mins => ${smallest})`));

  const due: Array<Omit<Due, "name">> = [];
  for (const n of offline) {
    const facts = { labels: n.labels as Record<string, string>, profile: n.profile as Record<string, unknown> };
    const matched = policy.filter((r) => matchesSelector(r.selector, facts));
    if (matched.length === 0) continue;
    const minutes = Math.min(...matched.map((r) => r.minutes));
    if (n.offlineMinutes < minutes) continue;
    due.push({ id: n.id, minutes, roles: matched.filter((r) => r.minutes === minutes).map((r) => r.name), lastSeenAt: n.lastSeenAt });
  }
  if (due.length === 0) return [];
  due.sort((a, b) => (a.id < b.id ? -1 : 1));
  const picked = due.slice(0, MAX_NODES_PER_CALL);
  const locked = await tx
    .select({ id: nodes.id, name: shownName })
    .from(nodes)
    .where(
      sql`(${nodes.id}, ${nodes.lastSeenAt}) in (select v.id, v.seen from jsonb_to_recordset(${JSON.stringify(picked.map((d) => ({ id: d.id, seen: d.lastSeenAt })))}::jsonb) as v(id uuid, seen timestamptz)) and ${nodes.state} = 'disconnected'`,
    )
    .orderBy(nodes.id)
    .for("update", { of: nodes });
  const names = new Map(locked.map((l) => [l.id, l.name]));
  return picked.filter((d) => names.has(d.id)).map((d) => ({ ...d, name: names.get(d.id)! }));
}

/** One rule in the audit event: the roles whose smallest limit it was, the limit, and the nodes it revoked. */
export interface RevokeOfflineRule {
  roles: string[];
  minutes: number;
  nodeIds: string[];
}

/** The audit event's rules: the nodes grouped by the roles that set their limit and the limit. */
function rulesOf(due: Due[]): RevokeOfflineRule[] {
  const rules = new Map<string, RevokeOfflineRule>();
  for (const d of due) {
    const key = `${d.minutes} ${d.roles.join(",")}`;
    const rule = rules.get(key) ?? { roles: d.roles, minutes: Number(d.minutes), nodeIds: [] };
    rule.nodeIds.push(d.id);
    rules.set(key, rule);
  }
  return [...rules.values()];
}

/**
 * One sweep of the policy, under its lease: null when another instance holds it or ran less than
 * `minIntervalMs` ago; else the nodes revoked (none is no event).
 */
export async function revokeOfflineNodes(deps: Pick<Deps, "db" | "log">, opts: { minIntervalMs?: number } = {}) {
  // No role has the policy (the default): nothing can be due, so no lease is taken and nothing stamped.
  // One read on a small table; the lease's own pre-check keeps a sweep that is not due from locking.
  const [policy] = await deps.db.select({ name: roles.name }).from(roles).where(isNotNull(roles.revokeOfflineMinutes)).limit(1);
  if (!policy) return { nodes: 0, grantsRevoked: 0 };
  return withSweepLease(deps.db, REVOKE_OFFLINE_LEASE, opts, async (tx, { now }) => {
    const due = await lockDue(tx, now);
    if (due.length === 0) return { nodes: 0, grantsRevoked: 0 };
    const grantsRevoked = await revokeSet(tx, due);
    await recordEvent(tx, {
      actor: ACTOR.revokeOfflinePolicy,
      action: "node.bulk-revoke",
      data: {
        nodes: due.length,
        nodeIds: due.map((d) => d.id),
        grantsRevoked,
        policy: "revokeOfflineAfter",
        rules: rulesOf(due),
        offlineSince: Object.fromEntries(due.map((d) => [d.id, d.lastSeenAt])),
      },
    });
    await notify(tx, CHANNELS.node, due.length === 1 ? due[0]!.id : MANY_NODES);
    deps.log.warn({ nodes: due.length, names: due.slice(0, 10).map((d) => d.name), grantsRevoked }, "nodes offline past their role's limit revoked");
    return { nodes: due.length, grantsRevoked };
  });
}
