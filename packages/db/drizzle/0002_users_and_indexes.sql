CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "users_name_idx" ON "users" USING btree ("name");--> statement-breakpoint
CREATE INDEX "nodes_name_idx" ON "nodes" USING btree ("name","id");--> statement-breakpoint
CREATE INDEX "nodes_last_seen_idx" ON "nodes" USING btree ("last_seen_at","id");--> statement-breakpoint
CREATE INDEX "nodes_drift_idx" ON "nodes" USING btree ("drift_count","id");--> statement-breakpoint
CREATE INDEX "nodes_labels_idx" ON "nodes" USING gin ("labels");--> statement-breakpoint
CREATE INDEX "events_actor_idx" ON "events" USING btree ("actor","id");--> statement-breakpoint
CREATE INDEX "events_action_idx" ON "events" USING btree ("action","id");