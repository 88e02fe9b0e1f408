// Dashboard users and named API keys, each with a role: admin changes the fleet,
// viewer only reads it. Only hashes of passwords and keys are stored.
import { pgTable, text, timestamp, uuid, uniqueIndex } from "drizzle-orm/pg-core";

export const USER_ROLES = ["admin", "viewer"] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    role: text("role").$type<UserRole>().notNull(),
    passwordHash: text("password_hash").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** A revoked user cannot log in and its sessions are refused. */
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("users_name_idx").on(t.name)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    /** The public part of the key (`meshk_<id>.<secret>`), shown in lists. */
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    role: text("role").$type<UserRole>().notNull(),
    keyHash: text("key_hash").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  // The name is the key's actor in the audit trail (`key:<name>`): one key per name, ever.
  (t) => [uniqueIndex("api_keys_name_idx").on(t.name)],
);
