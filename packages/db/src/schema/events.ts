// Events: the audit trail of every mutation and of what hosts reported.
import { sql } from "drizzle-orm";
import { pgTable, text, jsonb, timestamp, uuid, bigserial, index } from "drizzle-orm/pg-core";

export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    nodeId: uuid("node_id"),
    /** What the action was about when not a node: a token id, a role name, a grant. */
    target: text("target"),
    result: text("result").notNull().default("ok"),
    data: jsonb("data").notNull().default({}),
  },
  (t) => [
    index("events_node_idx").on(t.nodeId, t.id),
    // The audit page filters by actor or action, newest first.
    index("events_actor_idx").on(t.actor, t.id),
    index("events_action_idx").on(t.action, t.id),
    // A rollout's history (rollout.get): its events name it as their target.
    index("events_rollout_target_idx").on(t.target, t.id).where(sql`${t.action} like 'rollout.%'`),
  ],
);
