// Reports: the latest per node (what the dashboard shows, and what survives a
// lost host store) plus a bounded history.
import { pgTable, text, integer, jsonb, timestamp, uuid, bigserial, index } from "drizzle-orm/pg-core";
import { nodes } from "./nodes";

export const latestReports = pgTable("latest_reports", {
  nodeId: uuid("node_id").primaryKey().references(() => nodes.id, { onDelete: "cascade" }),
  declarationVersion: integer("declaration_version").notNull(),
  hash: text("hash").notNull(),
  body: jsonb("body").notNull(),
  receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
});

export const reportHistory = pgTable(
  "report_history",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    nodeId: uuid("node_id").notNull().references(() => nodes.id, { onDelete: "cascade" }),
    declarationVersion: integer("declaration_version").notNull(),
    hash: text("hash").notNull(),
    body: jsonb("body").notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("report_history_node_idx").on(t.nodeId, t.id)],
);
