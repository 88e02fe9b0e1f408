// Content-addressed files served to hosts (file and package sources), by sha256.
import { pgTable, text, integer, timestamp, customType } from "drizzle-orm/pg-core";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

export const blobs = pgTable("blobs", {
  sha256: text("sha256").primaryKey(),
  size: integer("size").notNull(),
  data: bytea("data").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});
