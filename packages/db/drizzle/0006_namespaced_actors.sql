-- Actors are namespaced (decision 0013): a user acts as `user:<name>`, a named key as
-- `key:<name>`. Rows written before say a user's bare name; they get the prefix here.
-- `api-key`, `bootstrap`, `control-plane` and `anonymous` were only ever written by the
-- control plane itself, so a bare name equal to one of them stays what it was. (`system`
-- was never an event actor before, so in events it can only have been a user.)
UPDATE "events" SET "actor" = 'user:' || "actor"
WHERE "actor" IN (SELECT "name" FROM "users") AND "actor" NOT IN ('api-key', 'bootstrap', 'control-plane', 'anonymous');
--> statement-breakpoint
UPDATE "users" SET "created_by" = 'user:' || "created_by"
WHERE "created_by" IN (SELECT "name" FROM "users") AND "created_by" NOT IN ('api-key', 'bootstrap', 'control-plane', 'anonymous', 'system');
--> statement-breakpoint
UPDATE "api_keys" SET "created_by" = 'user:' || "created_by"
WHERE "created_by" IN (SELECT "name" FROM "users") AND "created_by" NOT IN ('api-key', 'bootstrap', 'control-plane', 'anonymous', 'system');
--> statement-breakpoint
UPDATE "enrolment_tokens" SET "created_by" = 'user:' || "created_by"
WHERE "created_by" IN (SELECT "name" FROM "users") AND "created_by" NOT IN ('api-key', 'bootstrap', 'control-plane', 'anonymous', 'system');
--> statement-breakpoint
-- A key's name is its actor, so two keys may not share one: later namesakes get their id appended.
UPDATE "api_keys" AS "k" SET "name" = "k"."name" || '-' || "k"."id"
WHERE EXISTS (
	SELECT 1 FROM "api_keys" AS "o"
	WHERE "o"."name" = "k"."name" AND ("o"."created_at" < "k"."created_at" OR ("o"."created_at" = "k"."created_at" AND "o"."id" < "k"."id"))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_name_idx" ON "api_keys" USING btree ("name");
