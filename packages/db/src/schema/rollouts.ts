// Staged rollouts (issue 14): a rollout of a role to a version, the nodes it reaches in waves, the pins
// that keep not-yet-released nodes on the version they had, and the lease that lets one control-plane
// instance at a time run them. The state machine is in packages/api/src/rollouts.
import { sql } from "drizzle-orm";
import { pgTable, text, integer, jsonb, timestamp, uuid, primaryKey, index } from "drizzle-orm/pg-core";
import { nodes } from "./nodes";

export const rollouts = pgTable(
  "rollouts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    roleName: text("role_name").notNull(),
    /** The version the reached nodes had (0: the role was new). */
    fromVersion: integer("from_version").notNull(),
    toVersion: integer("to_version").notNull(),
    /** The StagedRolloutPolicy it runs by. */
    policy: jsonb("policy").notNull(),
    /** ROLLOUT_STATES: running, paused, halted, completed, superseded, rolled-back. */
    state: text("state").$type<"running" | "paused" | "halted" | "completed" | "superseded" | "rolled-back">().notNull(),
    /** How many waves (the canary is wave 0). */
    waves: integer("waves").notNull(),
    /** The wave released last. */
    currentWave: integer("current_wave").notNull().default(0),
    waveStartedAt: timestamp("wave_started_at", { withTimezone: true }).notNull(),
    /** When every node of the current wave had an outcome (the soak starts here). */
    waveDoneAt: timestamp("wave_done_at", { withTimezone: true }),
    haltReason: text("halt_reason"),
    /** The plan summary it was started from (waves and their sizes, nodes released at once). */
    plan: jsonb("plan").$type<{ nodes: number; unchanged: number; waves: number[]; fromVersion: number; toVersion: number }>().notNull(),
    /** A rollback's rollout: the rollout it undoes. */
    rollbackOf: uuid("rollback_of"),
    supersededBy: uuid("superseded_by"),
    actor: text("actor").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    index("rollouts_role_idx").on(t.roleName, t.createdAt),
    index("rollouts_active_idx").on(t.state).where(sql`${t.state} in ('running', 'paused', 'halted')`),
  ],
);

export const rolloutNodes = pgTable(
  "rollout_nodes",
  {
    rolloutId: uuid("rollout_id")
      .notNull()
      .references(() => rollouts.id, { onDelete: "cascade" }),
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    wave: integer("wave").notNull(),
    /** The version of the role the node had when the rollout reached it (its pin, else the rollout's from_version). */
    fromVersion: integer("from_version").notNull(),
    /** Set in the transaction that deleted the node's pin and recompiled it: a wave is released once. */
    releasedAt: timestamp("released_at", { withTimezone: true }),
    /** The node's declaration version after its release: a report of it (or later) decides the outcome. */
    declaredVersion: integer("declared_version"),
    /** ROLLOUT_OUTCOMES, null while pending. */
    outcome: text("outcome").$type<"applied" | "failed" | "timed-out">(),
  },
  (t) => [primaryKey({ columns: [t.rolloutId, t.nodeId], name: "rollout_nodes_pk" }), index("rollout_nodes_wave_idx").on(t.rolloutId, t.wave)],
);

/** A node compiles roleName at version while the pin exists (version 0: the role is left out, it was new). */
export const rolePins = pgTable(
  "role_pins",
  {
    nodeId: uuid("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    roleName: text("role_name").notNull(),
    version: integer("version").notNull(),
    rolloutId: uuid("rollout_id").references(() => rollouts.id, { onDelete: "set null" }),
  },
  (t) => [
    primaryKey({ columns: [t.nodeId, t.roleName], name: "role_pins_pk" }),
    index("role_pins_role_idx").on(t.roleName),
    index("role_pins_rollout_idx").on(t.rolloutId),
  ],
);

/** One row ("rollouts"): the instance that runs rollouts until expiresAt, renewed every tick. */
export const rolloutLease = pgTable("rollout_lease", {
  name: text("name").primaryKey(),
  owner: text("owner").notNull(),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
});
