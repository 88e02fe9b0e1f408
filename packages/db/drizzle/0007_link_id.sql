-- A node remembers which link marked it connected: a late close of an older link on the
-- same gateway must not mark a node gone that a newer link holds (issue 11). Null for
-- rows written before; markDisconnected of a link never matches them, the gateway sweep does.
ALTER TABLE "nodes" ADD COLUMN IF NOT EXISTS "link_id" text;
