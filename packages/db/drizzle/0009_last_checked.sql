-- When the control plane last heard a node's report, changed or not (issue 11): an unchanged report
-- writes nothing but this time, batched by the gateway at most once a minute for all checked nodes.
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "last_checked_at" timestamp with time zone;
