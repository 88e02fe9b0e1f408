// Roles: a named set of resources and a selector over labels and profile facts.
import { pgTable, text, jsonb, timestamp } from "drizzle-orm/pg-core";

export const roles = pgTable("roles", {
  name: text("name").primaryKey(),
  selector: jsonb("selector").notNull(),
  resources: jsonb("resources").notNull(),
  grants: jsonb("grants").notNull().default([]),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
