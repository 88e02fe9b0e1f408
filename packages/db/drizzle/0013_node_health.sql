-- Issue 13, honest state: what a node's health is computed from (services/node-health.ts), a display
-- name an admin gives (null: the hostname) and when the node's stored report last changed.
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "display_name" text;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "last_changed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "skipped_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "rejected_version" integer;--> statement-breakpoint
-- Nodes that reported before this migration: their figures from the report they have (its body is in
-- report_bodies since 0012).
UPDATE "nodes" SET
  "skipped_count" = coalesce(jsonb_array_length(rb."body" -> 'skipped'), 0),
  "rejected_version" = (rb."body" ->> 'rejectedVersion')::int,
  "last_changed_at" = lr."received_at"
FROM "latest_reports" lr JOIN "report_bodies" rb ON rb."hash" = lr."body_hash"
WHERE lr."node_id" = "nodes"."id";--> statement-breakpoint
-- The fleet sorts by the name it shows.
CREATE INDEX IF NOT EXISTS "nodes_shown_name_idx" ON "nodes" USING btree ((coalesce("display_name", "name")), "id");
