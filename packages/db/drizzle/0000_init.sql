CREATE TABLE "enrolment_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"secret_hash" text NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"max_uses" integer DEFAULT 1 NOT NULL,
	"uses" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"state" text DEFAULT 'disconnected' NOT NULL,
	"labels" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"public_key" text NOT NULL,
	"machine_id" text NOT NULL,
	"profile" jsonb NOT NULL,
	"inventory" jsonb NOT NULL,
	"token_id" text,
	"declared_version" integer DEFAULT 0 NOT NULL,
	"applied_version" integer DEFAULT 0 NOT NULL,
	"owned_count" integer DEFAULT 0 NOT NULL,
	"drift_count" integer DEFAULT 0 NOT NULL,
	"error_count" integer DEFAULT 0 NOT NULL,
	"store_lost" boolean DEFAULT false NOT NULL,
	"host_version" text,
	"gateway_id" text,
	"last_seen_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "roles" (
	"name" text PRIMARY KEY NOT NULL,
	"selector" jsonb NOT NULL,
	"resources" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "declarations" (
	"node_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"hash" text NOT NULL,
	"resources" jsonb NOT NULL,
	"roles" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "declarations_node_id_version_pk" PRIMARY KEY("node_id","version")
);
--> statement-breakpoint
CREATE TABLE "latest_reports" (
	"node_id" uuid PRIMARY KEY NOT NULL,
	"declaration_version" integer NOT NULL,
	"hash" text NOT NULL,
	"body" jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "report_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"node_id" uuid NOT NULL,
	"declaration_version" integer NOT NULL,
	"hash" text NOT NULL,
	"body" jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"node_id" uuid,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"user" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "declarations" ADD CONSTRAINT "declarations_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "latest_reports" ADD CONSTRAINT "latest_reports_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_history" ADD CONSTRAINT "report_history_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "nodes_state_idx" ON "nodes" USING btree ("state");--> statement-breakpoint
CREATE INDEX "nodes_machine_id_idx" ON "nodes" USING btree ("machine_id");--> statement-breakpoint
CREATE INDEX "report_history_node_idx" ON "report_history" USING btree ("node_id","id");--> statement-breakpoint
CREATE INDEX "events_node_idx" ON "events" USING btree ("node_id","id");