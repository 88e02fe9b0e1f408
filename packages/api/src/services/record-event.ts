// Appends one audit event. Every mutation and every refusal goes through here.
import { events, type DbOrTx } from "@mesh/db";

export interface EventInput {
  actor: string;
  action: string;
  nodeId?: string | null;
  target?: string | null;
  result?: "ok" | "refused" | "failed";
  data?: Record<string, unknown>;
}

export async function recordEvent(db: DbOrTx, event: EventInput): Promise<void> {
  await db.insert(events).values({
    actor: event.actor,
    action: event.action,
    nodeId: event.nodeId ?? null,
    target: event.target ?? null,
    result: event.result ?? "ok",
    data: event.data ?? {},
  });
}

/** Appends several audit events in one statement (one round trip, as on a fleet-wide path). */
export async function recordEvents(db: DbOrTx, list: EventInput[]): Promise<void> {
  if (list.length === 0) return;
  await db.insert(events).values(
    list.map((event) => ({
      actor: event.actor,
      action: event.action,
      nodeId: event.nodeId ?? null,
      target: event.target ?? null,
      result: event.result ?? "ok",
      data: event.data ?? {},
    })),
  );
}
