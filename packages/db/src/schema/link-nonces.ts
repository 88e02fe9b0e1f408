// Link challenge nonces already used, by any instance: a captured auth header
// cannot be replayed to another instance. Rows expire with their nonce.
import { index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const linkNoncesUsed = pgTable(
  "link_nonces_used",
  {
    nonce: text("nonce").primaryKey(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("link_nonces_used_expires_idx").on(t.expiresAt)],
);
