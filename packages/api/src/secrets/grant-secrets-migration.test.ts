// Upgrading a database written by an older version: migration 0005 takes grant
// secrets out of declaration history, and openSecrets seals the ones in the grants
// table; the host is still given the same credential. On PGlite and on Postgres.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { createDb, declarationBodies, declarations, grants, type Database } from "@mesh/db";
import { migrationsFolder } from "@mesh/db/migrate";
import { createPostgresDatabase, testEngines } from "@mesh/db/testing";
import type { Resource } from "@mesh/protocol";
import { revealGrantFiles } from "../grants/reveal-grant-files";
import { openSecrets } from "./open-secrets";
import { isSealed, SecretKeyError } from "./secret-box";

/** The migrations folder as it was before 0005. */
function foldersBefore0005(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-migrations-"));
  fs.cpSync(migrationsFolder(), dir, { recursive: true });
  const journalPath = path.join(dir, "meta", "_journal.json");
  const journal = JSON.parse(fs.readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
  journal.entries = journal.entries.filter((e) => e.tag < "0005");
  fs.writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

async function migrateWith(database: Database, folder: string) {
  if (database.kind === "pglite") await migratePglite(database.db as never, { migrationsFolder: folder });
  else await migratePostgres(database.db as never, { migrationsFolder: folder });
}

describe.each(testEngines())("grant secrets from an older version (%s)", (engine) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it("purges secrets from every declaration row, seals the grants table, and still delivers the credential", async () => {
    let database: Database;
    if (engine === "pglite") {
      database = await createDb({ dataDir: "memory://" });
    } else {
      const pg = await createPostgresDatabase();
      database = await createDb({ url: pg.url, maxConnections: 4 });
      cleanups.push(pg.drop);
    }
    cleanups.push(() => database.close());
    const { db } = database;
    await migrateWith(database, foldersBefore0005());

    // As the old version wrote them: the credential in clear in the grants table and in two versions of history.
    const nodeId = randomUUID();
    const oldCredential = "DATABASE_URL=postgres://mesh_x_shop_db:old-password-AAAAAAAAAAAAAAAA@db/shop\n";
    const credential = "DATABASE_URL=postgres://mesh_x_shop_db:new-password-BBBBBBBBBBBBBBBB@db/shop\n";
    // Raw SQL: the schema in code is the one after the migration.
    const spec = { id: "shop-db", provider: "postgres", path: "/etc/shop/db.env", mode: "0600", access: "read", schema: "public" };
    await db.execute(
      sql`insert into nodes (id, name, public_key, machine_id, profile, inventory, declared_version, state) values (${nodeId}, 'n', 'k', ${randomUUID()}, '{}', '{}', 2, 'enrolled')`,
    );
    await db.execute(
      sql`insert into grants (node_id, grant_id, provider, principal, spec, secret) values (${nodeId}, 'shop-db', 'postgres', 'mesh_x_shop_db', ${JSON.stringify(spec)}::jsonb, ${credential})`,
    );
    const grantFile = (content: string) => ({
      type: "file",
      id: "shop-db",
      path: "/etc/shop/db.env",
      mode: "0600",
      content,
      encoding: "utf8",
      onDrift: "correct",
    });
    const motd = { type: "file", id: "motd", path: "/etc/motd", content: "hello\n", mode: "0644" };
    const history = [
      [1, [motd, grantFile(oldCredential)]],
      [2, [grantFile(credential), motd]],
    ] as const;
    for (const [version, resources] of history) {
      await db.execute(
        sql`insert into declarations (node_id, version, hash, resources) values (${nodeId}, ${version}, 'h', ${JSON.stringify(resources)}::jsonb)`,
      );
    }

    await migrateWith(database, migrationsFolder());
    // Since migration 0008 a version names its body by hash; the two bodies (one hash before) stay two.
    const rows = await db
      .select({ version: declarations.version, hash: declarations.hash, resources: declarationBodies.resources })
      .from(declarations)
      .innerJoin(declarationBodies, eq(declarationBodies.hash, declarations.hash))
      .where(eq(declarations.nodeId, nodeId))
      .orderBy(declarations.version);
    expect(JSON.stringify(rows)).not.toMatch(/password/);
    // The one hash that named two bodies became two names a host accepts (64 hex digits, migration 0008).
    expect(rows.map((r) => r.hash)).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/), expect.stringMatching(/^[0-9a-f]{64}$/)]);
    expect(rows[0]!.hash).not.toBe(rows[1]!.hash);
    expect(rows[1]!.resources).toEqual([
      expect.objectContaining({ id: "shop-db", content: expect.stringMatching(/^mesh-grant:shop-db:sha256:[0-9a-f]{64}$/) }),
      motd,
    ]);
    expect(rows[0]!.resources).toEqual([motd, expect.objectContaining({ id: "shop-db", content: expect.stringMatching(/^mesh-grant:shop-db:sha256:/) })]);

    const filenodes = async () =>
      (await db.execute(sql`select pg_relation_filenode('declarations')::text as d, pg_relation_filenode('grants')::text as g`)) as unknown;
    const nodesOf = (r: unknown) => JSON.stringify("rows" in (r as object) ? (r as { rows: unknown }).rows : r);
    const before = nodesOf(await filenodes());
    const key = randomBytes(32);
    const { box, sealed, vacuumed } = await openSecrets(db, { key, from: "test" });
    expect(sealed).toBe(1);
    // The purged and the just-sealed clear values lived on in dead row versions: both tables were rewritten
    // (VACUUM FULL gives a table a new file), once.
    expect(vacuumed).toBe(true);
    const after = nodesOf(await filenodes());
    expect(JSON.parse(after)[0].d).not.toBe(JSON.parse(before)[0].d);
    expect(JSON.parse(after)[0].g).not.toBe(JSON.parse(before)[0].g);
    const [row] = await db.select().from(grants).where(eq(grants.nodeId, nodeId));
    expect(isSealed(row!.secret!)).toBe(true);
    expect(row!.secret).not.toContain("password");
    expect(await openSecrets(db, { key, from: "test" })).toMatchObject({ sealed: 0, vacuumed: false });
    expect(nodesOf(await filenodes())).toBe(after);

    // The host is given exactly what it was given before.
    const revealed = await revealGrantFiles(db, box, nodeId, rows[1]!.resources as Resource[]);
    expect(revealed).toEqual({ ok: true, resources: [grantFile(credential), motd] });

    // Another instance with another key refuses to start rather than fail to open secrets later.
    await expect(openSecrets(db, { key: randomBytes(32), from: "MESH_SECRET_KEY" })).rejects.toThrow(SecretKeyError);
    await expect(openSecrets(db, { key: randomBytes(32), from: "MESH_SECRET_KEY" })).rejects.toThrow(/same MESH_SECRET_KEY/);
  });
});
