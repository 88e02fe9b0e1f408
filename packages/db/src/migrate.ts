// Applies the committed drizzle-kit migrations at start-up. On Postgres an
// advisory lock makes concurrent instances take turns, without the statement
// deadline: a migration (or the wait for another instance's) may be long.
import path from "node:path";
import { createRequire } from "node:module";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import type { Database } from "./client";

const MIGRATION_LOCK = 7_240_361;

export function migrationsFolder(): string {
  // Resolved through the package, so it works from source and from a bundle.
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve("@mesh/db/package.json")), "drizzle");
}

export async function migrate(database: Database): Promise<void> {
  const folder = migrationsFolder();
  if (database.kind === "pglite") {
    await migratePglite(database.db as never, { migrationsFolder: folder });
    return;
  }
  await database.withoutDeadlines((unbounded) =>
    unbounded.withAdvisoryLock(MIGRATION_LOCK, () => migratePostgres(unbounded.db as never, { migrationsFolder: folder })),
  );
}
