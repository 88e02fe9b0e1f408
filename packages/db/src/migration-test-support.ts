// For tests of one migration on a database that has data in the shape before it: a database
// (PGlite in memory, or a fresh Postgres database next to DATABASE_URL) migrated up to, not
// including, the migration named by `tag`. The test then inserts old-shape rows and runs migrate().
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { createDb, type Database } from "./client";
import { migrationsFolder } from "./migrate";
import { createPostgresDatabase } from "./testing";

/** A copy of the migrations folder that stops before `tag`. */
function migrationsBefore(tag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-migrations-"));
  fs.cpSync(migrationsFolder(), dir, { recursive: true });
  const journalPath = path.join(dir, "meta", "_journal.json");
  const journal = JSON.parse(fs.readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
  journal.entries = journal.entries.filter((e) => e.tag < tag);
  fs.writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

/** A database at the schema just before migration `tag`, and how to drop it. */
export async function databaseBefore(engine: "pglite" | "postgres", tag: string): Promise<{ database: Database; drop: () => Promise<void> }> {
  let database: Database;
  let drop = async () => {};
  if (engine === "pglite") database = await createDb({ dataDir: "memory://" });
  else {
    const pg = await createPostgresDatabase();
    database = await createDb({ url: pg.url });
    drop = pg.drop;
  }
  const before = migrationsBefore(tag);
  try {
    if (database.kind === "pglite") await migratePglite(database.db as never, { migrationsFolder: before });
    else await migratePostgres(database.db as never, { migrationsFolder: before });
  } finally {
    fs.rmSync(before, { recursive: true, force: true });
  }
  return { database, drop };
}
