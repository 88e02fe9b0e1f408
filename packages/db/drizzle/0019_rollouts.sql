-- Staged rollouts (issue 14). A role may keep a default rollout policy; a node with a pin for a role
-- compiles that role at the pinned version (role_versions), else at the newest; a rollout puts the nodes a
-- change reaches into waves and releases them (deletes their pins) one wave at a time. One control-plane
-- instance at a time runs rollouts: it holds the lease row. Declarations record the role versions that
-- made them. See docs/decisions (rollout state machine).
ALTER TABLE "roles" ADD COLUMN IF NOT EXISTS "rollout_policy" jsonb;
--> statement-breakpoint
ALTER TABLE "declarations" ADD COLUMN IF NOT EXISTS "role_versions" jsonb DEFAULT '{}'::jsonb NOT NULL;
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "rollouts" (
  "id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
  "role_name" text NOT NULL,
  "from_version" integer NOT NULL,
  "to_version" integer NOT NULL,
  "policy" jsonb NOT NULL,
  "state" text NOT NULL,
  "waves" integer NOT NULL,
  "current_wave" integer DEFAULT 0 NOT NULL,
  "wave_started_at" timestamp with time zone NOT NULL,
  "wave_done_at" timestamp with time zone,
  "halt_reason" text,
  "plan" jsonb NOT NULL,
  "rollback_of" uuid,
  "superseded_by" uuid,
  "actor" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  "finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "rollouts_role_idx" ON "rollouts" ("role_name", "created_at");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "rollouts_active_idx" ON "rollouts" ("state") WHERE "state" IN ('running', 'paused', 'halted');
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "rollout_nodes" (
  "rollout_id" uuid NOT NULL,
  "node_id" uuid NOT NULL,
  "wave" integer NOT NULL,
  "from_version" integer NOT NULL,
  "released_at" timestamp with time zone,
  "declared_version" integer,
  "outcome" text,
  CONSTRAINT "rollout_nodes_pk" PRIMARY KEY ("rollout_id", "node_id")
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "rollout_nodes_wave_idx" ON "rollout_nodes" ("rollout_id", "wave");
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "role_pins" (
  "node_id" uuid NOT NULL,
  "role_name" text NOT NULL,
  "version" integer NOT NULL,
  "rollout_id" uuid,
  CONSTRAINT "role_pins_pk" PRIMARY KEY ("node_id", "role_name")
);
--> statement-breakpoint
-- Foreign keys named as drizzle names them (the snapshot), as 0000 does.
ALTER TABLE "rollout_nodes" ADD CONSTRAINT "rollout_nodes_rollout_id_rollouts_id_fk" FOREIGN KEY ("rollout_id") REFERENCES "public"."rollouts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "rollout_nodes" ADD CONSTRAINT "rollout_nodes_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "role_pins" ADD CONSTRAINT "role_pins_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "role_pins" ADD CONSTRAINT "role_pins_rollout_id_rollouts_id_fk" FOREIGN KEY ("rollout_id") REFERENCES "public"."rollouts"("id") ON DELETE set null ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "role_pins_role_idx" ON "role_pins" ("role_name");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "role_pins_rollout_idx" ON "role_pins" ("rollout_id");
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "rollout_lease" (
  "name" text PRIMARY KEY NOT NULL,
  "owner" text NOT NULL,
  "expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_rollout_target_idx" ON "events" ("target", "id") WHERE "action" LIKE 'rollout.%';
