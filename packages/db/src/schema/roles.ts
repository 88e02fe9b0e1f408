// Roles: a named set of resources and a selector over labels and profile facts. Every save makes
// a new immutable version (role_versions); roles holds the newest, and its number (issue 14).
import { pgTable, text, json, jsonb, timestamp, integer, primaryKey } from "drizzle-orm/pg-core";

export const roles = pgTable("roles", {
  name: text("name").primaryKey(),
  selector: jsonb("selector").notNull(),
  resources: jsonb("resources").notNull(),
  grants: jsonb("grants").notNull().default([]),
  /** { selector, resources } as the author sent them (key order kept: json, not jsonb), for the editor; null if not known. */
  source: json("source"),
  /** The newest version's number (role_versions.version). */
  version: integer("version").notNull().default(1),
  /** The rollout policy a save uses when it names none (RolloutPolicy); null = all at once (issue 14). */
  rolloutPolicy: jsonb("rollout_policy"),
  /** Revoke a node of this role disconnected longer than this many minutes (services/revoke-offline.ts); null: never. */
  revokeOfflineMinutes: integer("revoke_offline_minutes"),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Every saved version of every role, immutable; outlives a deleted role (no foreign key). */
export const roleVersions = pgTable(
  "role_versions",
  {
    roleName: text("role_name").notNull(),
    version: integer("version").notNull(),
    selector: jsonb("selector").notNull(),
    resources: jsonb("resources").notNull(),
    grants: jsonb("grants").notNull().default([]),
    source: json("source"),
    /** The role's revoke-offline policy at this version (roles.revoke_offline_minutes). */
    revokeOfflineMinutes: integer("revoke_offline_minutes"),
    /** Why, as the author said it (optional). */
    message: text("message"),
    actor: text("actor").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.roleName, t.version] })],
);
