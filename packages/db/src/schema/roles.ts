// Roles: a named set of resources and a selector over labels and profile facts.
import { pgTable, text, integer, json, jsonb, timestamp } from "drizzle-orm/pg-core";

export const roles = pgTable("roles", {
  name: text("name").primaryKey(),
  selector: jsonb("selector").notNull(),
  resources: jsonb("resources").notNull(),
  grants: jsonb("grants").notNull().default([]),
  /** { selector, resources } as the author sent them (key order kept: json, not jsonb), for the editor; null if not known. */
  source: json("source"),
  /** Revoke a node of this role disconnected longer than this many minutes (services/revoke-offline.ts); null: never. */
  revokeOfflineMinutes: integer("revoke_offline_minutes"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
