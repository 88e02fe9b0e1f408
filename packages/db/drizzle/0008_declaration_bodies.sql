-- Declarations are content-addressed (issue 11, decision 0018): a body (the resources) is
-- stored once by its hash; a node's history is a small row (node, version, hash).
CREATE TABLE IF NOT EXISTS "declaration_bodies" (
	"hash" text PRIMARY KEY NOT NULL,
	"resources" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- A hash that names two different bodies (migration 0005 rewrote grant contents under their old
-- hash) gives each body a name of its own, so no row changes content on the way: the sha256 of the
-- body's text (hosts take a declaration hash as 64 hex digits; they do not recompute it). Colliding
-- hashes are found by grouping first, so a large history is not compared row against row.
UPDATE "declarations" SET "hash" = encode(sha256(convert_to("resources"::text, 'UTF8')), 'hex')
WHERE "hash" IN (SELECT "hash" FROM "declarations" GROUP BY "hash" HAVING count(DISTINCT md5("resources"::text)) > 1);
--> statement-breakpoint
INSERT INTO "declaration_bodies" ("hash", "resources")
SELECT DISTINCT ON ("hash") "hash", "resources" FROM "declarations" ORDER BY "hash"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
ALTER TABLE "declarations" DROP COLUMN "resources";
--> statement-breakpoint
ALTER TABLE "declarations" ADD CONSTRAINT "declarations_hash_declaration_bodies_hash_fk" FOREIGN KEY ("hash") REFERENCES "public"."declaration_bodies"("hash") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "declarations_hash_idx" ON "declarations" USING btree ("hash");
