CREATE TABLE "bootstrap_secrets_used" (
	"secret_hash" text PRIMARY KEY NOT NULL,
	"used_at" timestamp with time zone DEFAULT now() NOT NULL
);
