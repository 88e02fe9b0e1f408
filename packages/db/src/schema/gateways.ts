// Gateway instances: each control-plane instance that holds host links beats
// here, so another instance can tell that one died and its nodes are disconnected.
import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const gateways = pgTable("gateways", {
  id: text("id").primaryKey(),
  startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
  heartbeatAt: timestamp("heartbeat_at", { withTimezone: true }).notNull().defaultNow(),
});
