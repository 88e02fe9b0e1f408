-- The newest store generation a node's host reported and the control plane stored (issue 12): a
-- report from an older store (a restored backup, a snapshot) is a store rolled back, so lost.
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "store_generation" bigint DEFAULT 0 NOT NULL;
