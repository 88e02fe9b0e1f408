// node.list: one page of the fleet, filtered and sorted on the server.
import { z } from "zod";
import { and, asc, count, desc, eq, ilike, type SQL } from "drizzle-orm";
import { nodes, NODE_STATES } from "@mesh/db";
import type { Deps } from "../deps";

export const ListNodesInput = z
  .strictObject({
    limit: z.number().int().min(1).max(500).default(50),
    offset: z.number().int().min(0).max(1_000_000).default(0),
    state: z.enum(NODE_STATES).optional(),
    search: z.string().max(128).optional(),
    sort: z.enum(["name", "lastSeenAt", "createdAt", "driftCount"]).default("name"),
    order: z.enum(["asc", "desc"]).default("asc"),
  })
  .default({ limit: 50, offset: 0, sort: "name", order: "asc" });
export type ListNodesInput = z.input<typeof ListNodesInput>;

export async function listNodes(deps: Pick<Deps, "db">, rawInput: ListNodesInput) {
  const input = ListNodesInput.parse(rawInput);
  const where: SQL[] = [];
  if (input.state) where.push(eq(nodes.state, input.state));
  if (input.search) where.push(ilike(nodes.name, `%${input.search.replace(/[%_\\]/g, (c) => `\\${c}`)}%`));
  const filter = where.length ? and(...where) : undefined;
  const column = nodes[input.sort];
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
      hostVersion: nodes.hostVersion,
      lastSeenAt: nodes.lastSeenAt,
      createdAt: nodes.createdAt,
    })
    .from(nodes)
    .where(filter)
    .orderBy(input.order === "asc" ? asc(column) : desc(column), asc(nodes.id))
    .limit(input.limit)
    .offset(input.offset);
  const [total] = await deps.db.select({ n: count() }).from(nodes).where(filter);
  return { items, total: total?.n ?? 0 };
}
