// Reconcile now, the gateway's part: a notification on the reconcile channel names the audit event of
// one call (services/reconcile-now.ts). The gateway reads it (one query per call, whatever the number
// of nodes) and sends a reconcile frame to the links it holds of those nodes whose host named
// reconcile-now on its upgrade; a host that did not would take the frame as bad.
import { and, eq, sql } from "drizzle-orm";
import { declarations, events, nodes, type DbOrTx } from "@mesh/db";
import { HOST_FEATURE, ReconcileFrame, type ServerFrame } from "@mesh/protocol";
import type { Logger } from "pino";
import type { ReconcileRequest } from "../services/reconcile-now";

export interface ReconcileLink {
  nodeId: string;
  /** What the host named on its upgrade (HOST_FEATURES_HEADER). */
  hostFeatures: Set<string>;
}

export interface ReconcileDeliveryOptions {
  db: DbOrTx;
  log: Logger;
  /** The links this gateway holds, ready for frames. */
  links: () => Map<string, ReconcileLink>;
  send: (link: ReconcileLink, frame: ServerFrame) => void;
}

const REQUEST_ACTIONS = ["node.reconcile", "role.reconcile", "node.correct-drift", "node.accept-drift"];

/** Handles one notification's payload; resolves to the number of frames sent. */
export function createReconcileDelivery(opts: ReconcileDeliveryOptions) {
  return async function deliver(payload: string): Promise<number> {
    if (!/^\d{1,18}$/.test(payload)) {
      opts.log.warn({ payload: payload.slice(0, 40) }, "reconcile notice with no event id; ignored");
      return 0;
    }
    const held = [...opts.links().values()].filter((l) => l.hostFeatures.has(HOST_FEATURE.reconcileNow));
    if (held.length === 0) return 0;
    const [event] = await opts.db
      .select({ action: events.action, data: events.data })
      .from(events)
      .where(eq(events.id, Number(payload)));
    if (!event || !REQUEST_ACTIONS.includes(event.action)) return 0;
    const request = event.data as ReconcileRequest;
    const frame = ReconcileFrame.safeParse({
      type: "reconcile",
      reason: request.reason?.slice(0, 200),
      ...(request.correct ? { correct: request.correct } : {}),
      ...(request.accept ? { accept: request.accept } : {}),
    });
    if (!frame.success) {
      opts.log.warn({ eventId: payload }, "reconcile request does not make a valid frame; ignored");
      return 0;
    }
    let targets: Set<string>;
    if (request.role !== undefined) {
      // Of the links held here, the nodes whose current declaration includes the role: one query.
      const rows = await opts.db
        .select({ id: nodes.id })
        .from(nodes)
        .innerJoin(declarations, and(eq(declarations.nodeId, nodes.id), eq(declarations.version, nodes.declaredVersion)))
        .where(
          sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(held.map((l) => l.nodeId))}::jsonb)::uuid) and ${declarations.roles} @> ${JSON.stringify([request.role])}::jsonb`,
        );
      targets = new Set(rows.map((r) => r.id));
    } else {
      targets = new Set(request.nodeIds ?? []);
    }
    let sent = 0;
    const links = opts.links();
    for (const link of held) {
      if (!targets.has(link.nodeId) || links.get(link.nodeId) !== link) continue;
      opts.send(link, frame.data);
      sent++;
    }
    opts.log.info({ eventId: payload, action: event.action, sent }, "reconcile frames sent");
    return sent;
  };
}
