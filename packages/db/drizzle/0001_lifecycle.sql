CREATE TABLE "gateways" (
	"id" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "blobs" (
	"sha256" text PRIMARY KEY NOT NULL,
	"size" integer NOT NULL,
	"data" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "grants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"node_id" uuid NOT NULL,
	"grant_id" text NOT NULL,
	"provider" text NOT NULL,
	"principal" text NOT NULL,
	"spec" jsonb NOT NULL,
	"secret" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
DROP INDEX "nodes_machine_id_idx";--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "conflicts" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "retire_mode" text;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "inventory_hash" text;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "retired_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "revoked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "roles" ADD COLUMN "grants" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "declarations" ADD COLUMN "final" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "target" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "result" text DEFAULT 'ok' NOT NULL;--> statement-breakpoint
ALTER TABLE "grants" ADD CONSTRAINT "grants_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "grants_node_idx" ON "grants" USING btree ("node_id");--> statement-breakpoint
CREATE UNIQUE INDEX "grants_principal_idx" ON "grants" USING btree ("provider","principal");--> statement-breakpoint
CREATE UNIQUE INDEX "nodes_machine_id_live_idx" ON "nodes" USING btree ("machine_id") WHERE "nodes"."state" <> 'retired';