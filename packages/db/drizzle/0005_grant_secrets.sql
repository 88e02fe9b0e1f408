-- Grant secrets leave declaration history (decision 0011): each grant file's content
-- becomes a reference (grant id + sha256 of the credential), the form compile writes now.
-- Sealing grants.secret needs the app's key, so the control plane does it at start (openSecrets).
ALTER TABLE "grants" ADD COLUMN "settled_at" timestamp with time zone;
--> statement-breakpoint
UPDATE "grants" SET "settled_at" = coalesce("revoked_at", "created_at");
--> statement-breakpoint
UPDATE "declarations" AS d SET "resources" = (
	SELECT jsonb_agg(
		CASE WHEN e.r->>'type' = 'file'
			AND e.r->>'content' NOT LIKE 'mesh-grant:%'
			AND EXISTS (SELECT 1 FROM "grants" g WHERE g."node_id" = d."node_id" AND g."grant_id" = e.r->>'id')
		THEN jsonb_set(e.r, '{content}', to_jsonb('mesh-grant:' || (e.r->>'id') || ':sha256:' || encode(sha256(convert_to(e.r->>'content', 'UTF8')), 'hex')))
		ELSE e.r END
		ORDER BY e.ord)
	FROM jsonb_array_elements(d."resources") WITH ORDINALITY AS e(r, ord)
)
WHERE jsonb_typeof(d."resources") = 'array' AND jsonb_array_length(d."resources") > 0
	AND EXISTS (SELECT 1 FROM "grants" g WHERE g."node_id" = d."node_id");
