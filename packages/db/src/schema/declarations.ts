// Declarations, content-addressed: a body (the resources) is stored once by its hash,
// and a node's history is a small row (node, version, hash). The current declaration is
// the row whose version equals nodes.declared_version. See decision 0018.
import { pgTable, text, integer, jsonb, timestamp, uuid, primaryKey, index } from "drizzle-orm/pg-core";
import { nodes } from "./nodes";

export const declarationBodies = pgTable("declaration_bodies", {
  /** contentHash(resources): the same resources are one row, whichever nodes hold them. */
  hash: text("hash").primaryKey(),
  resources: jsonb("resources").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const declarations = pgTable(
  "declarations",
  {
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    hash: text("hash")
      .notNull()
      .references(() => declarationBodies.hash),
    roles: jsonb("roles").$type<string[]>().notNull().default([]),
    /** The role versions that made it: { role name: version } (issue 14). */
    roleVersions: jsonb("role_versions").$type<Record<string, number>>().notNull().default({}),
    /** Set on a retiring node's last declaration: "remove" or "forget". */
    final: text("final").$type<"remove" | "forget">(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.version] }), index("declarations_hash_idx").on(t.hash)],
);
