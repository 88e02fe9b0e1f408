// node.list: one page of the fleet, filtered and sorted on the server.
import { z } from "zod";
import { and, asc, count, desc, eq, gt, ilike, isNull, sql, type SQL } from "drizzle-orm";
import { declarations, nodes, NODE_STATES } from "@mesh/db";
import type { Deps } from "../deps";
import { lastSeenAt, seenBy, seenByJoin } from "./last-seen";

export const ListNodesInput = z
  .strictObject({
    limit: z.number().int().min(1).max(500).default(50),
    offset: z.number().int().min(0).max(1_000_000).default(0),
    state: z.enum(NODE_STATES).optional(),
    search: z.string().max(128).optional(),
    /** `key=value` (or just `key`): nodes with that label. */
    label: z.string().max(200).regex(/^[A-Za-z0-9._\/-]+(=[^\s]*)?$/, "key=value").optional(),
    /** Nodes that declare resources of this role. */
    role: z.string().max(64).optional(),
    /** true: only nodes with drift; false: only nodes without. */
    drift: z.boolean().optional(),
    sort: z.enum(["name", "state", "lastSeenAt", "createdAt", "driftCount", "hostVersion"]).default("name"),
    order: z.enum(["asc", "desc"]).default("asc"),
  })
  .default({ limit: 50, offset: 0, sort: "name", order: "asc" });
export type ListNodesInput = z.input<typeof ListNodesInput>;

export async function listNodes(deps: Pick<Deps, "db">, rawInput: ListNodesInput) {
  const input = ListNodesInput.parse(rawInput);
  // Forgotten nodes (retired or revoked, removed by an admin) are not in the Fleet; node.get still answers.
  const where: SQL[] = [isNull(nodes.forgottenAt)];
  if (input.state) where.push(eq(nodes.state, input.state));
  if (input.label) {
    const [key, ...rest] = input.label.split("=");
    where.push(rest.length ? sql`${nodes.labels} @> ${JSON.stringify({ [key!]: rest.join("=") })}::jsonb` : sql`${nodes.labels} ? ${key}`);
  }
  if (input.role) where.push(sql`${declarations.roles} @> ${JSON.stringify([input.role])}::jsonb`);
  if (input.drift !== undefined) where.push(input.drift ? gt(nodes.driftCount, 0) : eq(nodes.driftCount, 0));
  if (input.search) where.push(ilike(nodes.name, `%${input.search.replace(/[%_\\]/g, (c) => `\\${c}`)}%`));
  // Roles come from the node's current declaration (the row at its declared version).
  const filter = and(...where);
  // Last seen is derived (a connected node's is its gateway's heartbeat): sorted by the same expression it shows.
  const column = input.sort === "lastSeenAt" ? lastSeenAt : nodes[input.sort];
  const items = await deps.db
    .select({
      id: nodes.id,
      name: nodes.name,
      state: nodes.state,
      labels: nodes.labels,
      declaredVersion: nodes.declaredVersion,
      appliedVersion: nodes.appliedVersion,
      ownedCount: nodes.ownedCount,
      driftCount: nodes.driftCount,
      errorCount: nodes.errorCount,
      storeLost: nodes.storeLost,
      /** A pending node: the live node it claims to be (awaiting an admin). */
      replacesNodeId: nodes.replacesNodeId,
      hostVersion: nodes.hostVersion,
      roles: declarations.roles,
      lastSeenAt,
      lastCheckedAt: nodes.lastCheckedAt,
      createdAt: nodes.createdAt,
    })
    .from(nodes)
    .leftJoin(declarations, and(eq(declarations.nodeId, nodes.id), eq(declarations.version, nodes.declaredVersion)))
    .leftJoin(seenBy, seenByJoin)
    .where(filter)
    .orderBy(input.order === "asc" ? asc(column) : desc(column), asc(nodes.id))
    .limit(input.limit)
    .offset(input.offset);
  const totalQuery = deps.db.select({ n: count() }).from(nodes);
  const [total] = await (input.role
    ? totalQuery.leftJoin(declarations, and(eq(declarations.nodeId, nodes.id), eq(declarations.version, nodes.declaredVersion))).where(filter)
    : totalQuery.where(filter));
  return { items, total: total?.n ?? 0 };
}
