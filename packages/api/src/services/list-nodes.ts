// node.list: one page of the fleet, filtered and sorted on the server.
import { z } from "zod";
import { and, asc, count, desc, eq, gt, ilike, isNull, sql, type SQL } from "drizzle-orm";
import { declarations, nodes, NODE_STATES, type DbOrTx } from "@mesh/db";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { LabelConditions, splitLabelCondition } from "@mesh/protocol";
import type { Deps } from "../deps";
import { lastSeenAt, seenBy, seenByJoin } from "./last-seen";
import { NODE_HEALTHS, nodeHealth, nodeHealthRank } from "./node-health";
import { shownName } from "./node-name";

export const NODE_SORTS = ["name", "state", "health", "lastSeenAt", "lastCheckedAt", "lastChangedAt", "createdAt", "driftCount", "hostVersion"] as const;

/** What selects nodes: the fleet list, its counts and its CSV export take the same filter. */
export const NodeFilter = z.strictObject({
  state: z.enum(NODE_STATES).optional(),
  health: z.enum(NODE_HEALTHS).optional(),
  search: z.string().max(128).optional(),
  /** `key=value` (or just `key`): nodes with that label. */
  label: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9._\/-]+(=[^\s]*)?$/, "key=value")
    .optional(),
  /** Several label conditions, all of which a node must meet (`key=value` or `key`). */
  labels: LabelConditions.optional(),
  /** Nodes that declare resources of this role. */
  role: z.string().max(64).optional(),
  /** true: only nodes with drift; false: only nodes without. */
  drift: z.boolean().optional(),
  sort: z.enum(NODE_SORTS).default("name"),
  order: z.enum(["asc", "desc"]).default("asc"),
});
export type NodeFilter = z.input<typeof NodeFilter>;

export const ListNodesInput = NodeFilter.extend({
  limit: z.number().int().min(1).max(500).default(50),
  offset: z.number().int().min(0).max(1_000_000).default(0),
}).default({ limit: 50, offset: 0, sort: "name", order: "asc" });
export type ListNodesInput = z.input<typeof ListNodesInput>;

/** The WHERE of a filter (roles need the current declaration joined: see currentDeclarationJoin). */
export function nodeFilterWhere(input: z.output<typeof NodeFilter>): SQL | undefined {
  // Forgotten nodes (retired or revoked, removed by an admin) are not in the Fleet (nor its export); node.get still answers.
  const where: SQL[] = [isNull(nodes.forgottenAt)];
  if (input.state) where.push(eq(nodes.state, input.state));
  if (input.health) where.push(sql`${nodeHealth} = ${input.health}`);
  const conditions = [...(input.label ? [input.label] : []), ...(input.labels ?? [])].map(splitLabelCondition);
  // Every key=value in one containment test, every bare key in one "has all keys" test: both use the GIN index.
  const pairs = Object.fromEntries(conditions.filter((c) => c.value !== undefined).map((c) => [c.key, c.value!]));
  const keys = conditions.filter((c) => c.value === undefined).map((c) => c.key);
  // (Two conditions on one key are refused by LabelConditions; a `label` and `labels` on one key that disagree match nothing, as asked.)
  if (conditions.some((c) => c.value !== undefined && pairs[c.key] !== c.value)) where.push(sql`false`);
  if (Object.keys(pairs).length > 0) where.push(sql`${nodes.labels} @> ${JSON.stringify(pairs)}::jsonb`);
  if (keys.length > 0) where.push(sql`${nodes.labels} ?& ${`{${keys.map((k) => JSON.stringify(k)).join(",")}}`}::text[]`);
  if (input.role) where.push(sql`${declarations.roles} @> ${JSON.stringify([input.role])}::jsonb`);
  if (input.drift !== undefined) where.push(input.drift ? gt(nodes.driftCount, 0) : eq(nodes.driftCount, 0));
  if (input.search) {
    const pattern = `%${input.search.replace(/[%_\\]/g, (c) => `\\${c}`)}%`;
    where.push(sql`(${ilike(shownName, pattern)} or ${ilike(nodes.name, pattern)})`);
  }
  return where.length ? and(...where) : undefined;
}

/** The node's current declaration (the row at its declared version): where its roles come from. */
export const currentDeclarationJoin = and(eq(declarations.nodeId, nodes.id), eq(declarations.version, nodes.declaredVersion));

function sortColumn(sort: (typeof NODE_SORTS)[number]): SQL | AnyPgColumn {
  if (sort === "name") return shownName;
  if (sort === "health") return nodeHealthRank;
  // Last seen is derived (a connected node's is its gateway's heartbeat): sorted by the same expression it shows.
  if (sort === "lastSeenAt") return lastSeenAt;
  return nodes[sort];
}

/** One page of the fleet, without its total (the export reads page after page in one snapshot). */
export async function listNodePage(db: DbOrTx, rawInput: ListNodesInput) {
  const input = ListNodesInput.parse(rawInput);
  const column = sortColumn(input.sort);
  const order = input.order === "asc" ? asc(column) : desc(column);
  return db
    .select({
      id: nodes.id,
      /** The name shown: the admin's display name, else the hostname. */
      name: shownName,
      hostname: nodes.name,
      displayName: nodes.displayName,
      state: nodes.state,
      health: nodeHealth,
      labels: nodes.labels,
      declaredVersion: nodes.declaredVersion,
      appliedVersion: nodes.appliedVersion,
      rejectedVersion: nodes.rejectedVersion,
      ownedCount: nodes.ownedCount,
      driftCount: nodes.driftCount,
      errorCount: nodes.errorCount,
      skippedCount: nodes.skippedCount,
      conflictCount: sql<number>`jsonb_array_length(${nodes.conflicts})`.mapWith(Number),
      storeLost: nodes.storeLost,
      /** A pending node: the live node it claims to be (awaiting an admin). */
      replacesNodeId: nodes.replacesNodeId,
      hostVersion: nodes.hostVersion,
      roles: declarations.roles,
      lastSeenAt,
      lastCheckedAt: nodes.lastCheckedAt,
      lastChangedAt: nodes.lastChangedAt,
      createdAt: nodes.createdAt,
    })
    .from(nodes)
    .leftJoin(declarations, currentDeclarationJoin)
    .leftJoin(seenBy, seenByJoin)
    .where(nodeFilterWhere(input))
    .orderBy(order, asc(nodes.id))
    .limit(input.limit)
    .offset(input.offset);
}

export async function listNodes(deps: Pick<Deps, "db">, rawInput: ListNodesInput) {
  const input = ListNodesInput.parse(rawInput);
  const filter = nodeFilterWhere(input);
  const items = await listNodePage(deps.db, input);
  const totalQuery = deps.db.select({ n: count() }).from(nodes);
  const [total] = await (input.role ? totalQuery.leftJoin(declarations, currentDeclarationJoin).where(filter) : totalQuery.where(filter));
  return { items, total: total?.n ?? 0 };
}
