// Reconcile now (issue 13): node.reconcile, role.reconcile, node.correctDrift and node.acceptDrift.
// One call is one audit event and ONE notification on the reconcile channel (the event's id),
// whatever the number of nodes: each gateway reads the event and sends a reconcile frame to the
// links it holds of those nodes whose host reads it (gateway/reconcile-delivery.ts).
import { z } from "zod";
import { eq, sql } from "drizzle-orm";
import { declarations, events, nodes, roles, notify, CHANNELS, type DbOrTx } from "@mesh/db";
import { HOST_FEATURE, LIMITS, ResourceId, RoleName, type Resource } from "@mesh/protocol";
import { MeshError } from "../errors";
import type { Deps } from "../deps";
import { currentDeclaration } from "./declaration-store";
import { IDS_IN_EVENT, loadNodeSet, NodeIds, type SetNode } from "./node-set";

export const ReconcileNodesInput = z.strictObject({ ids: NodeIds });
export const ReconcileRoleInput = z.strictObject({ name: RoleName });
export const DriftInput = z.strictObject({
  id: z.uuid(),
  resourceIds: z
    .array(ResourceId)
    .min(1, "name at least one resource")
    .max(LIMITS.resources)
    .transform((ids) => [...new Set(ids)]),
});

/** What one call did: how many nodes it named, and why some will not reconcile now. */
export interface ReconcileAnswer {
  /** The audit event that carries the request (and its notification). */
  eventId: number | null;
  asked: number;
  /** Sent a reconcile frame: linked now, with a host that reads it. */
  sent: number;
  /** Not linked now (disconnected, pending, retired, revoked…): they reconcile when they link again. */
  offline: number;
  /** Linked, but the host did not name reconcile-now on its link: upgrade mesh-host. */
  tooOld: number;
}

/** The event data a gateway reads back (reconcile-delivery.ts). */
export interface ReconcileRequest {
  nodeIds?: string[];
  role?: string;
  correct?: string[];
  accept?: string[];
  reason: string;
}

const online = (n: Pick<SetNode, "state" | "gatewayId">) => n.state === "enrolled" && n.gatewayId !== null;
const reads = (n: Pick<SetNode, "hostFeatures">) => Array.isArray(n.hostFeatures) && n.hostFeatures.includes(HOST_FEATURE.reconcileNow);

function answerFor(rows: Array<Pick<SetNode, "state" | "gatewayId" | "hostFeatures">>): Omit<ReconcileAnswer, "eventId"> {
  const offline = rows.filter((n) => !online(n)).length;
  const tooOld = rows.filter((n) => online(n) && !reads(n)).length;
  return { asked: rows.length, sent: rows.length - offline - tooOld, offline, tooOld };
}

/** Records the call's one event and, when any host can be told, its one notification. */
async function request(
  tx: DbOrTx,
  opts: { actor: string; action: string; nodeId?: string; target?: string; request: ReconcileRequest; answer: Omit<ReconcileAnswer, "eventId"> },
): Promise<ReconcileAnswer> {
  const [row] = await tx
    .insert(events)
    .values({ actor: opts.actor, action: opts.action, nodeId: opts.nodeId ?? null, target: opts.target ?? null, data: { ...opts.answer, ...opts.request } })
    .returning({ id: events.id });
  if (opts.answer.sent > 0) await notify(tx, CHANNELS.reconcile, String(row!.id));
  return { eventId: row!.id, ...opts.answer };
}

export async function reconcileNodes(deps: Pick<Deps, "db">, opts: { actor: string; input: z.input<typeof ReconcileNodesInput> }): Promise<ReconcileAnswer> {
  const { ids } = ReconcileNodesInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    const rows = await loadNodeSet(tx, ids);
    const answer = answerFor(rows);
    const nodeIds = rows.filter((n) => online(n) && reads(n)).map((n) => n.id);
    return request(tx, {
      actor: opts.actor,
      action: "node.reconcile",
      nodeId: ids.length === 1 ? ids[0] : undefined,
      request: { nodeIds: nodeIds.slice(0, IDS_IN_EVENT), reason: `node.reconcile by ${opts.actor}` },
      answer,
    });
  });
}

/** Every node whose current declaration includes the role: counted in one statement, delivered by role name. */
export async function reconcileRole(deps: Pick<Deps, "db">, opts: { actor: string; input: z.input<typeof ReconcileRoleInput> }): Promise<ReconcileAnswer> {
  const { name } = ReconcileRoleInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    const [role] = await tx.select({ name: roles.name }).from(roles).where(eq(roles.name, name));
    if (!role) throw new MeshError("NOT_FOUND", `no role named ${name}`);
    const [counts] = (await tx
      .select({
        asked: sql<number>`count(*)::int`,
        offline: sql<number>`(count(*) filter (where not (${nodes.state} = 'enrolled' and ${nodes.gatewayId} is not null)))::int`,
        tooOld: sql<number>`(count(*) filter (where ${nodes.state} = 'enrolled' and ${nodes.gatewayId} is not null and not ${nodes.hostFeatures} @> ${JSON.stringify([HOST_FEATURE.reconcileNow])}::jsonb))::int`,
      })
      .from(nodes)
      .innerJoin(declarations, sql`${declarations.nodeId} = ${nodes.id} and ${declarations.version} = ${nodes.declaredVersion}`)
      .where(sql`${declarations.roles} @> ${JSON.stringify([name])}::jsonb`)) as Array<{ asked: number; offline: number; tooOld: number }>;
    const asked = counts?.asked ?? 0;
    const offline = counts?.offline ?? 0;
    const tooOld = counts?.tooOld ?? 0;
    return request(tx, {
      actor: opts.actor,
      action: "role.reconcile",
      target: name,
      request: { role: name, reason: `role.reconcile ${name} by ${opts.actor}` },
      answer: { asked, offline, tooOld, sent: asked - offline - tooOld },
    });
  });
}

/**
 * Correct (once, as if `onDrift: correct`) or accept (as observed now) the drift of `onDrift: report`
 * resources of one node. Every id must be a resource of its current declaration that reports drift.
 */
export async function resolveDrift(
  deps: Pick<Deps, "db">,
  opts: { actor: string; how: "correct" | "accept"; input: z.input<typeof DriftInput> },
): Promise<ReconcileAnswer> {
  const { id, resourceIds } = DriftInput.parse(opts.input);
  return deps.db.transaction(async (tx) => {
    const [node] = await loadNodeSet(tx, [id]);
    const declaration = await currentDeclaration(tx, id);
    const declared = new Map(((declaration?.resources ?? []) as Resource[]).map((r) => [r.id, r]));
    const unknown = resourceIds.filter((r) => !declared.has(r));
    if (unknown.length > 0) throw new MeshError("BAD_INPUT", `not in the node's declaration: ${unknown.slice(0, 5).join(", ")}`);
    const notReport = resourceIds.filter((r) => (declared.get(r) as { onDrift?: string }).onDrift !== "report");
    if (notReport.length > 0)
      throw new MeshError(
        "BAD_INPUT",
        `only onDrift: report resources can be corrected or accepted by hand; ${notReport.slice(0, 5).join(", ")} ${notReport.length === 1 ? "is" : "are"} corrected by the host itself`,
      );
    const answer = answerFor([node!]);
    if (answer.offline > 0)
      throw new MeshError("CONFLICT", `${node!.name} is not linked now (${node!.state}); its drift can be ${opts.how}ed once its host is back`);
    if (answer.tooOld > 0)
      throw new MeshError("CONFLICT", `${node!.name}'s mesh-host does not read reconcile requests; upgrade it to ${opts.how} drift from here`);
    return request(tx, {
      actor: opts.actor,
      action: opts.how === "correct" ? "node.correct-drift" : "node.accept-drift",
      nodeId: id,
      request: { nodeIds: [id], [opts.how]: resourceIds, reason: `node.${opts.how}Drift by ${opts.actor}` },
      answer,
    });
  });
}
