// The change bus: every control-plane instance hears what any instance committed. Postgres
// LISTEN/NOTIFY by default (nats-bus.ts for NATS); notify inside a transaction sends on commit.
import { sql as drizzleSql } from "drizzle-orm";
import type { Sql } from "postgres";
import type { PGlite } from "@electric-sql/pglite";
import type { DbOrTx } from "./client";
import { queueNotification } from "./bus-outbox";

/** The payload on `declaration` and `node` that means "any number of nodes": each listener compares what it holds with the database. */
export const MANY_NODES = "*";

export const CHANNELS = {
  /**
   * payload: a node id = that one node's current declaration changed; MANY_NODES ("*") = any number of
   * nodes' declarations changed (a fleet compile sends one notification for the whole change):
   * each gateway compares the declared versions of the links it holds with the database.
   */
  declaration: "mesh_declaration",
  /** payload: node id whose record changed (state, report, labels), or MANY_NODES ("*") for many nodes at once (views reload) */
  node: "mesh_node",
  /**
   * payload: "<node id> <reason>": close that node's link at once (revoked, retired, re-enrolled); or
   * "* <reason>" (MANY_NODES) after a bulk change: every gateway checks every link it holds against its node.
   */
  link: "mesh_link",
  /**
   * payload: the id of the audit event (node.reconcile, role.reconcile, node.correct-drift, node.accept-drift)
   * that asked hosts to reconcile now: one notification per call, whatever the number of nodes; each
   * gateway reads the event and sends a reconcile frame to the links it holds of those nodes.
   */
  reconcile: "mesh_reconcile",
  /** payload: grant row id the provider must be made to match (after the commit that changed it) */
  grant: "mesh_grant",
  /** payload: a random token; an instance's readiness check sends one and waits to hear it back (/readyz). */
  probe: "mesh_probe",
} as const;
export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

/** pg_notify's own limit (8000 bytes), kept for every bus so a payload never depends on which one runs. */
export const MAX_PAYLOAD_BYTES = 7999;

export interface SubscribeOptions {
  /**
   * Called when this subscription may have missed notifications: its connection to the bus was lost
   * and is back (the subscription is active again when it is called). Notifications are at most once;
   * a subscriber that must not miss a change compares what it holds with the database here.
   */
  onGap?: () => void;
}

export interface ChangeBus {
  subscribe(channel: Channel, listener: (payload: string) => void, opts?: SubscribeOptions): Promise<() => Promise<void>>;
}

/** Queue a notification; it is delivered when the surrounding transaction commits. */
export async function notify(db: DbOrTx, channel: Channel, payload: string): Promise<void> {
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`bus payload on ${channel} exceeds ${MAX_PAYLOAD_BYTES} bytes`);
  // a NATS-backed database queues it for after the commit (bus-outbox.ts)
  if (queueNotification(db, channel, payload)) return;
  await db.execute(drizzleSql`select pg_notify(${channel}, ${payload})`);
}

/**
 * Several notifications, delivered when the surrounding transaction commits, in one statement
 * whatever their number (a batch of enrolments notifies once per node it made, not once per statement).
 */
export async function notifyMany(db: DbOrTx, notifications: Array<[Channel, string]>): Promise<void> {
  for (const [channel, payload] of notifications) {
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`bus payload on ${channel} exceeds ${MAX_PAYLOAD_BYTES} bytes`);
  }
  if (notifications.length === 0) return;
  const [first, ...rest] = notifications;
  if (rest.length === 0) return notify(db, first![0], first![1]);
  // a NATS-backed database queues them for after the commit (bus-outbox.ts)
  if (queueNotification(db, first![0], first![1])) {
    for (const [channel, payload] of rest) queueNotification(db, channel, payload);
    return;
  }
  // In the order given (ordinality): a listener hears them as if notify() had been called for each.
  await db.execute(
    drizzleSql`select pg_notify(n.v->>0, n.v->>1) from jsonb_array_elements(${JSON.stringify(notifications)}::jsonb) with ordinality as n(v, i) order by n.i`,
  );
}

export function createPostgresBus(sql: Sql): ChangeBus {
  return {
    async subscribe(channel, listener, opts = {}) {
      // postgres.js calls onlisten each time its listening connection has (re)issued LISTEN: the first
      // call is this subscription; every later one follows a lost connection, when anything may have been missed.
      let listened = false;
      const sub = await sql.listen(
        channel,
        (payload) => listener(payload),
        () => {
          if (listened) opts.onGap?.();
          listened = true;
        },
      );
      return () => sub.unlisten();
    },
  };
}

export function createPgliteBus(pg: PGlite): ChangeBus {
  return {
    // In-process: nothing sits between a commit and its listeners, so there is never a gap.
    async subscribe(channel, listener) {
      return pg.listen(channel, listener);
    },
  };
}
