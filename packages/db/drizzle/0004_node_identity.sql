ALTER TABLE "nodes" ADD COLUMN "replaces_node_id" uuid;--> statement-breakpoint
ALTER TABLE "nodes" ADD COLUMN "enrolled_from" text;--> statement-breakpoint
DROP INDEX "nodes_machine_id_live_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "nodes_machine_id_live_idx" ON "nodes" USING btree ("machine_id") WHERE "nodes"."state" not in ('retired', 'revoked', 'pending');--> statement-breakpoint
CREATE INDEX "nodes_replaces_idx" ON "nodes" USING btree ("replaces_node_id");--> statement-breakpoint
CREATE TABLE "link_nonces_used" (
	"nonce" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "link_nonces_used_expires_idx" ON "link_nonces_used" USING btree ("expires_at");
