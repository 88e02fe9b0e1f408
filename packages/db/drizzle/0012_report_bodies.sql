-- Report bodies are content-addressed (issue 11, decision 0028-report-bodies): what a report says
-- about the machine (owned, drift, errors, skipped, storeLost, rejectedVersion) is stored once by its
-- hash; latest_reports and report_history keep small rows naming it, with the report's own parts
-- (declaration version, reconciled at, origin, store generation). "hash" stays the report's hash (what
-- decides "unchanged"); "body_hash" names the body. Existing bodies are named by the sha256 of their
-- jsonb text (new ones by the sha256 of their JSON text in the API: the same body may be stored twice
-- under two names until the old one is no longer named and the sweep removes it; nothing compares the two).
CREATE TABLE IF NOT EXISTS "report_bodies" (
	"hash" text PRIMARY KEY NOT NULL,
	"body" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "latest_reports" ADD COLUMN "body_hash" text, ADD COLUMN "reconciled_at" text, ADD COLUMN "origin" jsonb, ADD COLUMN "store_generation" bigint;
--> statement-breakpoint
ALTER TABLE "report_history" ADD COLUMN "body_hash" text, ADD COLUMN "reconciled_at" text, ADD COLUMN "origin" jsonb, ADD COLUMN "store_generation" bigint;
--> statement-breakpoint
UPDATE "latest_reports" SET
	"body_hash" = encode(sha256(convert_to(("body" - 'declarationVersion' - 'reconciledAt' - 'origin' - 'storeGeneration')::text, 'UTF8')), 'hex'),
	"reconciled_at" = "body" ->> 'reconciledAt',
	"origin" = "body" -> 'origin',
	"store_generation" = ("body" ->> 'storeGeneration')::bigint;
--> statement-breakpoint
UPDATE "report_history" SET
	"body_hash" = encode(sha256(convert_to(("body" - 'declarationVersion' - 'reconciledAt' - 'origin' - 'storeGeneration')::text, 'UTF8')), 'hex'),
	"reconciled_at" = "body" ->> 'reconciledAt',
	"origin" = "body" -> 'origin',
	"store_generation" = ("body" ->> 'storeGeneration')::bigint;
--> statement-breakpoint
INSERT INTO "report_bodies" ("hash", "body")
SELECT DISTINCT ON ("body_hash") "body_hash", "body" - 'declarationVersion' - 'reconciledAt' - 'origin' - 'storeGeneration'
FROM (SELECT "body_hash", "body" FROM "latest_reports" UNION ALL SELECT "body_hash", "body" FROM "report_history") r
ORDER BY "body_hash"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
ALTER TABLE "latest_reports" ALTER COLUMN "body_hash" SET NOT NULL, ALTER COLUMN "reconciled_at" SET NOT NULL, DROP COLUMN "body";
--> statement-breakpoint
ALTER TABLE "report_history" ALTER COLUMN "body_hash" SET NOT NULL, ALTER COLUMN "reconciled_at" SET NOT NULL, DROP COLUMN "body";
