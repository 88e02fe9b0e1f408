-- Act now (issue 13). The server frames a node's host said it reads on its current link (the
-- x-mesh-host-features upgrade header), written with the connect: node.reconcile tells an admin
-- how many hosts are too old for a reconcile frame without asking any gateway.
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "host_features" jsonb DEFAULT '[]'::jsonb NOT NULL;
--> statement-breakpoint
-- A retired or revoked node removed from the Fleet list (soft: its row, audit history, reports
-- and declarations stay, and node.get still answers for links from the audit).
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "forgotten_at" timestamp with time zone;
