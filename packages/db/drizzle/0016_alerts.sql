CREATE TABLE "webhooks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"events" jsonb NOT NULL,
	"offline_minutes" integer,
	"secret" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"webhook_id" uuid NOT NULL REFERENCES "webhooks"("id") ON DELETE cascade,
	"event" text NOT NULL,
	"body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "alert_deliveries_due_idx" ON "alert_deliveries" USING btree ("next_attempt_at") WHERE "alert_deliveries"."status" = 'pending';
--> statement-breakpoint
CREATE INDEX "alert_deliveries_webhook_idx" ON "alert_deliveries" USING btree ("webhook_id","id");
--> statement-breakpoint
CREATE TABLE "alert_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" bigint NOT NULL REFERENCES "alert_deliveries"("id") ON DELETE cascade,
	"webhook_id" uuid NOT NULL,
	"event" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"http_status" integer,
	"ok" boolean NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE INDEX "alert_attempts_webhook_idx" ON "alert_attempts" USING btree ("webhook_id","id");
--> statement-breakpoint
CREATE TABLE "alert_cursor" (
	"id" integer PRIMARY KEY NOT NULL,
	"event_id" bigint NOT NULL,
	"evaluated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
INSERT INTO "alert_cursor" ("id", "event_id", "evaluated_at") SELECT 1, coalesce(max("id"), 0), now() FROM "events";
