// Bootstrap secrets already traded for a token: each is accepted once, ever.
import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const bootstrapSecretsUsed = pgTable("bootstrap_secrets_used", {
  secretHash: text("secret_hash").primaryKey(),
  usedAt: timestamp("used_at", { withTimezone: true }).notNull().defaultNow(),
});
