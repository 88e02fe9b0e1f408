// Events: the audit trail of every mutation and of what hosts reported.
import { pgTable, text, jsonb, timestamp, uuid, bigserial, index } from "drizzle-orm/pg-core";

export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    actor: text("actor").notNull(),
    action: text("action").notNull(),
    nodeId: uuid("node_id"),
    data: jsonb("data").notNull().default({}),
  },
  (t) => [index("events_node_idx").on(t.nodeId, t.id)],
);
