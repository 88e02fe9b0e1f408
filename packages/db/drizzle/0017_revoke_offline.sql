-- A role's revoke-when-offline policy (issue 13): minutes a node of the role may stay disconnected
-- before the control plane revokes it; null (the default) is off.
ALTER TABLE "roles" ADD COLUMN IF NOT EXISTS "revoke_offline_minutes" integer;
--> statement-breakpoint
-- When a fleet-wide sweep last ran, one row per sweep: taken FOR UPDATE SKIP LOCKED so a control
-- plane of several instances runs each sweep once at a time (services/sweep-lease.ts).
CREATE TABLE IF NOT EXISTS "sweep_leases" (
	"name" text PRIMARY KEY NOT NULL,
	"evaluated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
INSERT INTO "sweep_leases" ("name", "evaluated_at") VALUES ('revoke-offline', now()) ON CONFLICT DO NOTHING;
