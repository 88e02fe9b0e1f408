// Grants: per-node credentials created at a provider (e.g. a Postgres LOGIN role)
// and revoked there when the node is retired or revoked.
import { pgTable, text, jsonb, timestamp, uuid, index, uniqueIndex } from "drizzle-orm/pg-core";
import { nodes } from "./nodes";

export const grants = pgTable(
  "grants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    /** The grant's id in the role that declares it. */
    grantId: text("grant_id").notNull(),
    provider: text("provider").notNull(),
    /** The provider's name for the credential (e.g. the Postgres role). */
    principal: text("principal").notNull(),
    spec: jsonb("spec").notNull(),
    /** The credential as the host receives it, sealed (AES-256-GCM, decision 0011); cleared when revoked. */
    secret: text("secret"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    /**
     * When the provider was made to match this row (issued with this secret, or revoked).
     * Null: committed here, not yet done at the provider (done after commit, so a rollback changes nothing there).
     */
    settledAt: timestamp("settled_at", { withTimezone: true }),
  },
  (t) => [index("grants_node_idx").on(t.nodeId), uniqueIndex("grants_principal_idx").on(t.provider, t.principal)],
);
