// event.list: the audit trail, newest first, filtered by actor, action or node,
// one page at a time (keyset on the event id so deep pages stay cheap).
import { z } from "zod";
import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { events, nodes } from "@mesh/db";
import type { Deps } from "../deps";

export const ListEventsInput = z
  .strictObject({
    limit: z.number().int().min(1).max(200).default(50),
    /** Events older than this id (the last id of the previous page). */
    before: z.number().int().min(1).optional(),
    actor: z.string().max(128).optional(),
    action: z.string().max(128).optional(),
    nodeId: z.uuid().optional(),
  })
  .default({ limit: 50 });
export type ListEventsInput = z.input<typeof ListEventsInput>;

export async function listEvents(deps: Pick<Deps, "db">, raw: ListEventsInput) {
  const input = ListEventsInput.parse(raw);
  const where: SQL[] = [];
  if (input.actor) where.push(eq(events.actor, input.actor));
  if (input.action) where.push(eq(events.action, input.action));
  if (input.nodeId) where.push(eq(events.nodeId, input.nodeId));
  if (input.before) where.push(lt(events.id, input.before));
  const rows = await deps.db
    .select({ id: events.id, at: events.at, actor: events.actor, action: events.action, nodeId: events.nodeId, nodeName: nodes.name, target: events.target, result: events.result, data: events.data })
    .from(events)
    .leftJoin(nodes, eq(nodes.id, events.nodeId))
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(events.id))
    .limit(input.limit + 1);
  const items = rows.slice(0, input.limit);
  return { items, nextBefore: rows.length > input.limit ? items[items.length - 1]!.id : null };
}
