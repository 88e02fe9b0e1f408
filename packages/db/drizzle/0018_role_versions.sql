-- Versioned roles (issue 14): every save of a role makes a new immutable version (who, when, an
-- optional message, the full content); roles.version names the newest. A role's versions outlive
-- the role (no foreign key): the audit and a declaration's provenance keep naming them, and a role
-- made again under the same name goes on from the last number. Roles saved before this migration
-- get version 1, their content as it is now.
ALTER TABLE "roles" ADD COLUMN IF NOT EXISTS "version" integer NOT NULL DEFAULT 1;
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "role_versions" (
  "role_name" text NOT NULL,
  "version" integer NOT NULL,
  "selector" jsonb NOT NULL,
  "resources" jsonb NOT NULL,
  "grants" jsonb DEFAULT '[]'::jsonb NOT NULL,
  "source" json,
  "revoke_offline_minutes" integer,
  "message" text,
  "actor" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "role_versions_role_name_version_pk" PRIMARY KEY ("role_name", "version")
);
--> statement-breakpoint
INSERT INTO "role_versions" ("role_name", "version", "selector", "resources", "grants", "source", "revoke_offline_minutes", "message", "actor", "created_at")
  SELECT "name", 1, "selector", "resources", "grants", "source", "revoke_offline_minutes", 'the role as it was when versions began', 'system:migration', "updated_at" FROM "roles"
  ON CONFLICT DO NOTHING;
