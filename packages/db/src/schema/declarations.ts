// Declarations: append-only history per node; the current one is the row whose
// version equals nodes.declared_version.
import { pgTable, text, integer, jsonb, timestamp, uuid, primaryKey } from "drizzle-orm/pg-core";
import { nodes } from "./nodes";

export const declarations = pgTable(
  "declarations",
  {
    nodeId: uuid("node_id").notNull().references(() => nodes.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    hash: text("hash").notNull(),
    resources: jsonb("resources").notNull(),
    roles: jsonb("roles").$type<string[]>().notNull().default([]),
    /** Set on a retiring node's last declaration: "remove" or "forget". */
    final: text("final").$type<"remove" | "forget">(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.version] })],
);
