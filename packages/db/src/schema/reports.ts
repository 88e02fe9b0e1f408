// Reports: the latest per node (what the dashboard shows, and what survives a lost host store) plus
// a bounded history. A report's body (what it says about the machine) is stored once by its hash in
// report_bodies, as declarations are: after a fleet-wide change thousands of hosts report the same
// body. The rows keep the report's own parts. services/report-store.ts reads and writes all three.
import { pgTable, text, integer, jsonb, timestamp, uuid, bigserial, bigint, index } from "drizzle-orm/pg-core";
import { nodes } from "./nodes";

export const reportBodies = pgTable("report_bodies", {
  /** sha256 of the body's JSON text: the report without declarationVersion, reconciledAt, origin and storeGeneration. */
  hash: text("hash").primaryKey(),
  body: jsonb("body").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** The columns latest_reports and report_history share: the report's own parts and its body's hash. */
const reportColumns = () => ({
  declarationVersion: integer("declaration_version").notNull(),
  /** reportHash(report): what decides "unchanged" (the report without reconciledAt and origin). */
  hash: text("hash").notNull(),
  /** report_bodies.hash (no foreign key: the sweep and the writer lock bodies instead, report-store.ts). */
  bodyHash: text("body_hash").notNull(),
  /** As the host sent it (ISO text, kept exactly). */
  reconciledAt: text("reconciled_at").notNull(),
  origin: jsonb("origin"),
  storeGeneration: bigint("store_generation", { mode: "number" }),
  receivedAt: timestamp("received_at", { withTimezone: true }).notNull().defaultNow(),
});

export const latestReports = pgTable("latest_reports", {
  nodeId: uuid("node_id")
    .primaryKey()
    .references(() => nodes.id, { onDelete: "cascade" }),
  ...reportColumns(),
});

export const reportHistory = pgTable(
  "report_history",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    ...reportColumns(),
  },
  (t) => [index("report_history_node_idx").on(t.nodeId, t.id)],
);
