-- A role as its author wrote it (issue 13): selector and resources in the author's key order and
-- without the defaults the parse adds, for the role editor. `json`, not `jsonb`: json keeps the
-- text, jsonb re-sorts keys. Null for a role saved before this column or by a service call.
ALTER TABLE "roles" ADD COLUMN IF NOT EXISTS "source" json;
