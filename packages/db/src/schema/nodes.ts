// Nodes: one row per enrolled machine, with its identity (public key), what it
// reported at enrolment and the summary figures the fleet list shows.
import { sql } from "drizzle-orm";
import { pgTable, text, integer, bigint, jsonb, timestamp, uuid, boolean, index, uniqueIndex } from "drizzle-orm/pg-core";
import type { NodeState } from "@mesh/protocol";

/** The states are the protocol's (node-state.ts), so the dashboard's client code has them without the database's. */
export { NODE_STATES, type NodeState } from "@mesh/protocol";

export const nodes = pgTable(
  "nodes",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** The hostname the machine enrolled with (kept as the host says it). */
    name: text("name").notNull(),
    /** A name an admin gave (node.rename); null shows the hostname. */
    displayName: text("display_name"),
    state: text("state").$type<NodeState>().notNull().default("disconnected"),
    labels: jsonb("labels").$type<Record<string, string>>().notNull().default({}),
    publicKey: text("public_key").notNull(),
    machineId: text("machine_id").notNull(),
    profile: jsonb("profile").notNull(),
    inventory: jsonb("inventory").notNull(),
    tokenId: text("token_id"),
    declaredVersion: integer("declared_version").notNull().default(0),
    appliedVersion: integer("applied_version").notNull().default(0),
    ownedCount: integer("owned_count").notNull().default(0),
    driftCount: integer("drift_count").notNull().default(0),
    errorCount: integer("error_count").notNull().default(0),
    /** Resources the latest stored report skipped (one they depend on failed): counts towards health `failing`. */
    skippedCount: integer("skipped_count").notNull().default(0),
    /** The declaration version the host refused as a whole in its latest stored report, if any. */
    rejectedVersion: integer("rejected_version"),
    storeLost: boolean("store_lost").notNull().default(false),
    /** The newest store generation the host reported (reset by a report saying its store was lost): an older one is a rolled back store. */
    storeGeneration: bigint("store_generation", { mode: "number" }).notNull().default(0),
    /** Roles that declare one resource differently: nothing new is pushed while any remain. */
    conflicts: jsonb("conflicts").$type<Array<{ key: string; roles: [string, string] }>>().notNull().default([]),
    /** "remove" or "forget" while retiring (keepResources forgets). */
    retireMode: text("retire_mode").$type<"remove" | "forget">(),
    inventoryHash: text("inventory_hash"),
    retiredAt: timestamp("retired_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    hostVersion: text("host_version"),
    gatewayId: text("gateway_id"),
    /** The link (one websocket on gatewayId) that marked the node connected: only its own close may mark it gone. */
    linkId: text("link_id"),
    /** A pending node: the live node it claims to replace (see decision 0005). */
    replacesNodeId: uuid("replaces_node_id"),
    /** The address the enrolment came from (shown when a replacement awaits approval). */
    enrolledFrom: text("enrolled_from"),
    /**
     * Written on transitions (connect, disconnect, release). While gatewayId is set the node's last seen
     * is its gateway's heartbeat instead (services/last-seen.ts): an idle link writes nothing.
     */
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }),
    /** The last report heard, stored or unchanged (unchanged ones batched at most once a minute by the gateway). */
    lastCheckedAt: timestamp("last_checked_at", { withTimezone: true }),
    /** When a stored report last differed from the node's previous one (the first report counts). */
    lastChangedAt: timestamp("last_changed_at", { withTimezone: true }),
    /** The server frames the host said it reads on its current (or last) link: x-mesh-host-features (HOST_FEATURE). */
    hostFeatures: jsonb("host_features").$type<string[]>().notNull().default([]),
    /** Set when an admin forgot a retired or revoked node: it leaves the Fleet list; its row and audit history stay. */
    forgottenAt: timestamp("forgotten_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("nodes_state_idx").on(t.state),
    // The fleet page sorts and filters on these; it must stay fast at 10,000 nodes.
    index("nodes_name_idx").on(t.name, t.id),
    index("nodes_shown_name_idx").on(sql`coalesce(${t.displayName}, ${t.name})`, t.id),
    index("nodes_last_seen_idx").on(t.lastSeenAt, t.id),
    index("nodes_drift_idx").on(t.driftCount, t.id),
    index("nodes_labels_idx").using("gin", t.labels),
    // One live node per machine. Retired and revoked nodes are history; pending ones are
    // claims on the live node, waiting for an admin (machine-id is a hint, not a credential).
    uniqueIndex("nodes_machine_id_live_idx").on(t.machineId).where(sql`${t.state} not in ('retired', 'revoked', 'pending')`),
    index("nodes_replaces_idx").on(t.replacesNodeId),
  ],
);
