// Grants against real Postgres: the node's credential connects; it is issued once
// (an unrelated change keeps it), kept sealed in the grants table only, set at the
// provider only after commit; after revoke it does not connect and its session is gone.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import postgres from "postgres";
import { eq, sql } from "drizzle-orm";
import { declarationBodies, events, grants, roles } from "@mesh/db";
import { createPostgresDatabase, createTestDatabase, type TestDatabase } from "@mesh/db/testing";
import type { Resource } from "@mesh/protocol";
import type { Deps } from "../deps";
import { enrolTestNode } from "../testing/test-nodes";
import { upsertRole } from "../services/roles";
import { getNode } from "../services/get-node";
import { revokeNode } from "../services/lifecycle";
import { recompileFleet } from "../services/recompile-fleet";
import { currentDeclaration } from "../services/declaration-store";
import { createSecretBox, isSealed } from "../secrets/secret-box";
import { createPostgresGrantProvider } from "./postgres-provider";
import { revealGrantFiles } from "./reveal-grant-files";
import { settleGrants } from "./settle-grants";

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;

withPostgres("postgres grants", () => {
  let t: TestDatabase;
  let target: { url: string; drop(): Promise<void> };
  let provider: ReturnType<typeof createPostgresGrantProvider>;
  let deps: Deps;
  let nodeId: string;
  const sessions: postgres.Sql[] = [];

  const connect = (url: string) => {
    const s = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    sessions.push(s);
    return s;
  };
  /** The credential as the gateway sends it to the host. */
  const delivered = async () => {
    const current = await currentDeclaration(deps.db, nodeId);
    const revealed = await revealGrantFiles(deps.db, deps.grants!.secrets, nodeId, current!.resources as Resource[]);
    if (!revealed.ok) throw new Error(revealed.reason);
    return revealed.resources.find((r) => r.id === "shop-db") as Extract<Resource, { type: "file" }>;
  };
  const urlOf = (content: string | undefined) => /^DATABASE_URL=(.*)$/m.exec(content ?? "")![1]!;
  const shopRole = (access: "read" | "readwrite" = "read") => ({
    name: "shop",
    selector: { labels: { app: "shop" } },
    resources: [],
    grants: [{ id: "shop-db", provider: "postgres" as const, path: "/etc/shop/db.env", access }],
  });

  beforeAll(async () => {
    t = await createTestDatabase("postgres");
    target = await createPostgresDatabase("mesh_grant_target");
    const admin = postgres(target.url, { max: 1, onnotice: () => {} });
    await admin`create table orders (id int primary key, item text)`;
    await admin`insert into orders values (1, 'tea')`;
    await admin.end();
    provider = createPostgresGrantProvider(target.url);
    deps = { db: t.database.db, log: pino({ level: "silent" }), grants: { providers: { postgres: provider }, secrets: createSecretBox(randomBytes(32)) } };
    ({ nodeId } = await enrolTestNode(deps, { labels: { app: "shop" } }));
  });
  afterAll(async () => {
    for (const s of sessions) await s.end({ timeout: 1 }).catch(() => {});
    for (const principal of (await provider?.list()) ?? []) if (principal.startsWith("mesh_")) await provider.revoke(principal).catch(() => {});
    await provider?.close();
    await target?.drop();
    await t?.drop();
  });

  it("issues a per-node login after commit, delivers it as a 0600 file, and keeps it sealed in the grants table only", async () => {
    await upsertRole(deps, { actor: "test", input: shopRole() });
    // Committed, but not at the provider yet: the gateway holds the declaration back.
    const current = await currentDeclaration(deps.db, nodeId);
    expect((await revealGrantFiles(deps.db, deps.grants!.secrets, nodeId, current!.resources as Resource[])).ok).toBe(false);
    expect(await settleGrants(deps)).toBe(0);

    const file = await delivered();
    expect(file.mode).toBe("0600");
    const url = urlOf(file.content);
    const password = decodeURIComponent(new URL(url).password);
    const session = connect(url);
    expect(await session`select item from orders`).toEqual([{ item: "tea" }]);
    await expect(session`insert into orders values (2, 'cake')`).rejects.toThrow(/permission denied/);

    const [row] = await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId));
    expect(isSealed(row!.secret!)).toBe(true);
    expect(row!.secret).not.toContain(password);
    const history = await deps.db.select().from(declarationBodies);
    expect(JSON.stringify(history)).not.toContain(password);
    expect(JSON.stringify(history)).not.toContain("DATABASE_URL");
    expect(JSON.stringify(await getNode(deps, nodeId))).not.toContain(password);
  });

  it("does not re-issue a grant when an unrelated role changes", async () => {
    const before = await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId));
    const url = urlOf((await delivered()).content);
    await upsertRole(deps, {
      actor: "test",
      input: { name: "other", selector: { labels: { app: "other" } }, resources: [{ type: "file", id: "motd", path: "/etc/motd", content: "hi\n" }] },
    });
    // A change that does reach this node recompiles it, and still keeps its grant.
    await upsertRole(deps, { actor: "test", input: { name: "everyone", resources: [{ type: "directory", id: "srv", path: "/srv" }] } });
    expect(await settleGrants(deps)).toBe(0);
    expect(await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId))).toEqual(before);
    const issued = await deps.db.select().from(events).where(eq(events.action, "grant.issue"));
    expect(issued).toHaveLength(1);
    expect(urlOf((await delivered()).content)).toBe(url);
    expect(await connect(url)`select item from orders`).toEqual([{ item: "tea" }]);
  });

  it("leaves the provider untouched when the transaction that re-issued a grant rolls back", async () => {
    const url = urlOf((await delivered()).content);
    const before = await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId));
    await expect(
      deps.db.transaction(async (tx) => {
        const role = shopRole("readwrite");
        await tx.update(roles).set({ grants: role.grants }).where(eq(roles.name, "shop"));
        await recompileFleet(tx, { actor: "test", grants: deps.grants });
        await tx.execute(sql`select 1/0`); // anything failing later in the same transaction
      }),
    ).rejects.toThrow();
    expect(await settleGrants(deps)).toBe(0);
    expect(await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId))).toEqual(before);
    // The password the database still holds is the one the provider accepts.
    const session = connect(url);
    expect(await session`select item from orders`).toEqual([{ item: "tea" }]);
    await expect(session`insert into orders values (3, 'jam')`).rejects.toThrow(/permission denied/);
  });

  it("revoking ends the login and its open session", async () => {
    const url = urlOf((await delivered()).content);
    const session = connect(url);
    expect(await session`select 1 as one`).toEqual([{ one: 1 }]);
    const revoked = await revokeNode(deps, { actor: "test", id: nodeId });
    expect(revoked.grantsRevoked).toBe(1);
    await expect(session`select 1`).rejects.toThrow();
    await expect(connect(url)`select 1`).rejects.toThrow(/authentication|does not exist|password/);
    const [row] = await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId));
    expect(row!.secret).toBeNull();
    expect(await provider.list()).not.toContain(row!.principal);
  });
});
