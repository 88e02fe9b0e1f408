// Enrolment tokens: a public id and a secret of which only a hash is stored.
import { pgTable, text, integer, jsonb, timestamp } from "drizzle-orm/pg-core";

export const enrolmentTokens = pgTable("enrolment_tokens", {
  id: text("id").primaryKey(),
  secretHash: text("secret_hash").notNull(),
  labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
  maxUses: integer("max_uses").notNull().default(1),
  uses: integer("uses").notNull().default(0),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
  lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  createdBy: text("created_by").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
