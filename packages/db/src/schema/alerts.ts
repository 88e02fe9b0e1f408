// Alerts (issue 13): webhooks an admin configures, the deliveries owed to them (a durable outbox any
// instance's worker drains, claiming rows with FOR UPDATE SKIP LOCKED), the log of attempts, and the one
// row the evaluator advances (the audit events read so far and the time evaluated to), locked per run.
import { sql } from "drizzle-orm";
import { pgTable, text, integer, bigint, jsonb, timestamp, uuid, boolean, bigserial, index } from "drizzle-orm/pg-core";

export const ALERT_EVENTS = ["offline", "failing", "drifted", "conflicted", "revoked", "enrolled", "rollout-halted"] as const;
export type AlertEvent = (typeof ALERT_EVENTS)[number];

export const webhooks = pgTable("webhooks", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  url: text("url").notNull(),
  events: jsonb("events").$type<AlertEvent[]>().notNull(),
  /** For "offline": how long a node must have been disconnected. */
  offlineMinutes: integer("offline_minutes"),
  /** The HMAC key, sealed with the control plane's secret key (shown once, at creation). */
  secret: text("secret").notNull(),
  enabled: boolean("enabled").notNull().default(true),
  createdBy: text("created_by").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const alertDeliveries = pgTable(
  "alert_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    webhookId: uuid("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    event: text("event").notNull(),
    /** The exact bytes sent (and signed), the same on every attempt. */
    body: text("body").notNull(),
    /** pending (owed), delivered, failed (gave up after the last attempt). */
    status: text("status").$type<"pending" | "delivered" | "failed">().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("alert_deliveries_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index("alert_deliveries_webhook_idx").on(t.webhookId, t.id),
  ],
);

export const alertAttempts = pgTable(
  "alert_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    deliveryId: bigint("delivery_id", { mode: "number" })
      .notNull()
      .references(() => alertDeliveries.id, { onDelete: "cascade" }),
    webhookId: uuid("webhook_id").notNull(),
    event: text("event").notNull(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    /** The receiver's HTTP status; null when none came (refused, timed out). */
    httpStatus: integer("http_status"),
    ok: boolean("ok").notNull(),
    error: text("error"),
  },
  (t) => [index("alert_attempts_webhook_idx").on(t.webhookId, t.id)],
);

/** One row (id 1): the audit events evaluated so far and the time evaluated to; a run locks it (SKIP LOCKED: once per control plane). */
export const alertCursor = pgTable("alert_cursor", {
  id: integer("id").primaryKey(),
  eventId: bigint("event_id", { mode: "number" }).notNull(),
  evaluatedAt: timestamp("evaluated_at", { withTimezone: true }).notNull(),
});

/** One row per fleet-wide sweep: when it last ran; a run locks its row (SKIP LOCKED: once per control plane). */
export const sweepLeases = pgTable("sweep_leases", {
  name: text("name").primaryKey(),
  evaluatedAt: timestamp("evaluated_at", { withTimezone: true }).notNull(),
});
