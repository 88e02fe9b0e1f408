// node.get: everything the node page shows, in one call; inline content only for admins
// (viewers get each content's sha256 and size).
import { desc, eq, getTableColumns } from "drizzle-orm";
import { events, grants, nodes, rolePins, rollouts } from "@mesh/db";
import type { Inventory, Profile, Resource } from "@mesh/protocol";
import { resourceStatuses } from "./resource-status";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { currentDeclaration, nodeDeclarationHistory } from "./declaration-store";
import { pendingClaimsOn } from "./node-replacement";
import { redactResources } from "./redact-content";
import { lastSeenAt, seenBy, seenByJoin } from "./last-seen";
import { nodeHealth } from "./node-health";
import { shownName } from "./node-name";
import { latestReport } from "./report-store";
import { loadRoles } from "./recompile-node";
import { nodeRoles } from "./role-pins";
import { resourceOrigins } from "../compile/compile-declaration";

export async function getNodeOrThrow(deps: Pick<Deps, "db">, id: string) {
  const [node] = await deps.db.select().from(nodes).where(eq(nodes.id, id));
  if (!node) throw new MeshError("NOT_FOUND", `no node with id ${id}`);
  return node;
}

export async function getNode(deps: Pick<Deps, "db">, id: string, opts: { showContent: boolean } = { showContent: false }) {
  // Last seen as shown: a connected node's is its gateway's heartbeat (services/last-seen.ts).
  const [node] = await deps.db
    .select({ ...getTableColumns(nodes), lastSeenAt, health: nodeHealth, shownName })
    .from(nodes)
    .leftJoin(seenBy, seenByJoin)
    .where(eq(nodes.id, id));
  if (!node) throw new MeshError("NOT_FOUND", `no node with id ${id}`);
  const [declaration, latest, recent, nodeGrants, versions, allRoles] = await Promise.all([
    currentDeclaration(deps.db, id),
    latestReport(deps.db, id),
    deps.db.select().from(events).where(eq(events.nodeId, id)).orderBy(desc(events.id)).limit(50),
    // Never the secret: the page shows which credentials exist and whether they are revoked.
    deps.db
      .select({ grantId: grants.grantId, provider: grants.provider, principal: grants.principal, createdAt: grants.createdAt, revokedAt: grants.revokedAt })
      .from(grants)
      .where(eq(grants.nodeId, id))
      .orderBy(grants.grantId),
    // A fleet compile records one event for all nodes: each node's versions are its own detail.
    nodeDeclarationHistory(deps.db, id),
    // Which roles match and where each resource came from: the one node compiled again
    // (declarations store only the roles that made them). Roles are few; nodes are not.
    loadRoles(deps.db),
  ]);
  // Roles a staged rollout holds at an older version on this node (issue 14): a few rows by primary key.
  const pins = await deps.db
    .select({ role: rolePins.roleName, version: rolePins.version, rolloutId: rolePins.rolloutId, toVersion: rollouts.toVersion, state: rollouts.state })
    .from(rolePins)
    .leftJoin(rollouts, eq(rollouts.id, rolePins.rolloutId))
    .where(eq(rolePins.nodeId, id))
    .orderBy(rolePins.roleName);
  // Machines that enrolled claiming to be this node, awaiting an admin (decision 0005).
  const claims = await pendingClaimsOn(deps.db, id);
  const report = latest?.report ?? null;
  // At the versions the node compiles: a staged rollout may pin some of its roles to older ones.
  const origins = resourceOrigins({ labels: node.labels, profile: node.profile as Record<string, unknown> }, await nodeRoles(deps.db, id, allRoles));
  const { publicKey: _publicKey, shownName: name, name: hostname, ...rest } = node;
  // Stored as parsed at enrolment, report and compile (jsonb columns are typed unknown): the wire contract's types.
  const resources = (declaration?.resources ?? []) as Resource[];
  const shown = declaration && { ...declaration, resources: opts.showContent ? resources : redactResources(resources) };
  return {
    ...rest,
    profile: rest.profile as Profile,
    inventory: rest.inventory as Inventory,
    /** The name shown (display name, else hostname) and the hostname the machine enrolled with. */
    name,
    hostname,
    declaration: shown,
    /** The roles whose selectors match the node now, by name. */
    roles: origins.roles,
    /** Resource id -> the matching role that declares it; a resource no matching role declares now has none. */
    resourceRoles: origins.origin,
    report,
    reportReceivedAt: latest?.receivedAt ?? null,
    owned: report?.owned ?? [],
    drift: report?.drift ?? [],
    errors: report?.errors ?? [],
    skipped: report?.skipped ?? [],
    resourceStates: resourceStatuses(resources, node.declaredVersion, report),
    events: recent,
    declarations: versions,
    grants: nodeGrants,
    claims,
    /** Roles this node keeps at an older version until a rollout reaches it (version 0: not given the role yet). */
    rolloutPins: pins,
  };
}
