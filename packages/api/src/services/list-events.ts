// event.list: the audit trail, newest first, filtered by actor, action, node and a time range,
// one page at a time (keyset on the event id so deep pages stay cheap); event.export: the same
// filter as CSV. A host's events name it by its node's name, not only `node:<uuid>`.
import { z } from "zod";
import { and, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { events, nodes } from "@mesh/db";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { csvCell } from "./csv";
import { redactRoleChangeRecord } from "./role-change-record";

/** What selects events: the list's and the export's shared filter. */
export const EventFilter = z.strictObject({
  actor: z.string().max(128).optional(),
  action: z.string().max(128).optional(),
  nodeId: z.uuid().optional(),
  /** Events at or after this instant. */
  since: z.iso.datetime({ offset: true }).optional(),
  /** Events before this instant. */
  until: z.iso.datetime({ offset: true }).optional(),
});
export type EventFilter = z.infer<typeof EventFilter>;

export const ListEventsInput = EventFilter.extend({
  limit: z.number().int().min(1).max(200).default(50),
  /** Events older than this id (the last id of the previous page). */
  before: z.number().int().min(1).optional(),
}).default({ limit: 50 });
export type ListEventsInput = z.input<typeof ListEventsInput>;

const actorNode = alias(nodes, "actor_node");

function filterWhere(input: EventFilter): SQL[] {
  if (input.since && input.until && Date.parse(input.since) >= Date.parse(input.until))
    throw new MeshError("BAD_INPUT", "the range's start must be before its end");
  const where: SQL[] = [];
  if (input.actor) where.push(eq(events.actor, input.actor));
  if (input.action) where.push(eq(events.action, input.action));
  if (input.nodeId) where.push(eq(events.nodeId, input.nodeId));
  if (input.since) where.push(gte(events.at, new Date(input.since)));
  if (input.until) where.push(lt(events.at, new Date(input.until)));
  return where;
}

async function selectEvents(deps: Pick<Deps, "db">, where: SQL[], limit: number) {
  return deps.db
    .select({
      id: events.id,
      at: events.at,
      actor: events.actor,
      // A host's own events: its node's name (the actor stays the stable id).
      actorName: actorNode.name,
      action: events.action,
      nodeId: events.nodeId,
      nodeName: nodes.name,
      target: events.target,
      result: events.result,
      data: events.data,
    })
    .from(events)
    .leftJoin(nodes, eq(nodes.id, events.nodeId))
    .leftJoin(actorNode, sql`${actorNode.id} = case when ${events.actor} ~ '^node:[0-9a-f-]{36}$' then substr(${events.actor}, 6)::uuid end`)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(events.id))
    .limit(limit);
}

/** A role change's content diff is inline content: only callers who see content get it (redact-content.ts). */
function shown<T extends { action: string; data: unknown }>(rows: T[], showContent: boolean): T[] {
  return showContent ? rows : rows.map((r) => (r.action === "role.upsert" ? { ...r, data: redactRoleChangeRecord(r.data) } : r));
}

export async function listEvents(deps: Pick<Deps, "db">, raw: ListEventsInput, opts: { showContent: boolean } = { showContent: false }) {
  const input = ListEventsInput.parse(raw);
  const where = filterWhere(input);
  if (input.before) where.push(lt(events.id, input.before));
  const rows = shown(await selectEvents(deps, where, input.limit + 1), opts.showContent);
  const items = rows.slice(0, input.limit);
  return { items, nextBefore: rows.length > input.limit ? items[items.length - 1]!.id : null };
}

/** The most rows one export carries; a wider range is narrowed by the caller (the CSV says so). */
export const EXPORT_LIMIT = 10_000;

/** event.export: the filtered trail as CSV, newest first, at most EXPORT_LIMIT rows (one query). */
export async function exportEvents(deps: Pick<Deps, "db">, raw: EventFilter, opts: { showContent: boolean } = { showContent: false }) {
  const input = EventFilter.parse(raw);
  const rows = shown(await selectEvents(deps, filterWhere(input), EXPORT_LIMIT + 1), opts.showContent);
  const truncated = rows.length > EXPORT_LIMIT;
  const lines = [["id", "at", "actor", "actor_name", "action", "node_id", "node_name", "target", "result", "data"].map(csvCell).join(",")];
  for (const r of rows.slice(0, EXPORT_LIMIT))
    lines.push([r.id, r.at, r.actor, r.actorName, r.action, r.nodeId, r.nodeName, r.target, r.result, r.data].map(csvCell).join(","));
  return { csv: lines.join("\r\n") + "\r\n", rows: Math.min(rows.length, EXPORT_LIMIT), truncated };
}
