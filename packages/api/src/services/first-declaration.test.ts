// A new node's first declaration, written with the node in one go, is what recompileNode
// would have stored for it (recompileNode kept as the oracle); tokens stay atomic when
// consumed last; single-node compiles share the compiler lock, role changes do not.
import { describe, expect, it } from "vitest";
import { sql, eq } from "drizzle-orm";
import { testEngines } from "@mesh/db/testing";
import { enrolmentTokens, nodes } from "@mesh/db";
import type { Deps } from "../deps";
import type { MeshError } from "../errors";
import { createToken, revokeToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { upsertRole, deleteRole } from "./roles";
import { seedClashingRoles } from "../testing/clashing-roles";
import { getNode } from "./get-node";
import { loadRoles, lockCompiler, lockCompilerShared, recompileNode } from "./recompile-node";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { createSecretBox } from "../secrets/secret-box";
import type { GrantProvider } from "../grants/provider";
import { randomBytes } from "node:crypto";
import { grants as grantsTable } from "@mesh/db";

/** Mints credentials and issues nothing (issuing happens after commit, settle-grants.ts). */
const mintingProvider: GrantProvider = {
  name: "postgres",
  mint: (principal) => `DATABASE_URL=postgres://${principal}:${randomBytes(12).toString("base64url")}@db/app\n`,
  issue: async () => {},
  revoke: async () => {},
  list: async () => [],
};

const inventory = emptyInventory();

describe.each(testEngines())("first declaration on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (labels: Record<string, string>, opts: { maxUses?: number } = {}) => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels, maxUses: opts.maxUses ?? 1 } });
    return enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory });
  };

  it("stores what recompileNode would: same hash, roles and conflicts, for matching, unmatched and conflicted nodes", async () => {
    await seedClashingRoles(deps);
    const enrolled = [await enrol({}), await enrol({ tier: "web" }), await enrol({ tier: "db" }), await enrol({ clash: "yes", tier: "web" })];
    for (const { nodeId } of enrolled) {
      const before = await getNode(deps, nodeId);
      const oracle = await deps.db.transaction(async (tx) => {
        await lockCompilerShared(tx);
        return recompileNode(tx, nodeId, { roles: await loadRoles(tx), actor: "oracle" });
      });
      // Nothing new to store: the enrolment already wrote exactly this declaration.
      expect(oracle.changed).toBe(false);
      expect(oracle.version).toBe(before.declaredVersion);
      const after = await getNode(deps, nodeId);
      expect(after.conflicts).toEqual(before.conflicts);
      expect(after.declaredVersion).toBe(before.declaredVersion);
    }
    const [plain, web, db, clash] = await Promise.all(enrolled.map((e) => getNode(deps, e.nodeId)));
    expect(plain!.declaredVersion).toBe(1);
    expect(plain!.declaration?.roles).toEqual(["base"]);
    expect(web!.declaration?.roles).toEqual(["base", "web"]);
    expect(db!.declaration?.roles).toEqual(["base"]);
    // A conflict pushes nothing: no version at all, the conflict on the node and in its events.
    expect(clash!.declaredVersion).toBe(0);
    expect(clash!.conflicts).toEqual([{ key: "c", roles: ["clash-a", "clash-b"] }]);
    expect(clash!.events.map((e) => e.action)).toEqual(expect.arrayContaining(["node.enrol", "declaration.conflict"]));
    expect(web!.events.map((e) => e.action)).toEqual(expect.arrayContaining(["node.enrol", "declaration.compile"]));
    for (const name of ["clash-a", "clash-b", "web", "base"]) await deleteRole(deps, { actor: "test", name });
  });

  it("issues a declared grant in the first declaration, as recompileNode would keep it", async () => {
    const withGrants: Deps = { ...deps, grants: { providers: { postgres: mintingProvider }, secrets: createSecretBox(randomBytes(32)) } };
    await upsertRole(withGrants, {
      actor: "test",
      input: { name: "shop", selector: { labels: { app: "shop" } }, resources: [], grants: [{ id: "db", provider: "postgres", path: "/etc/shop.env" }] },
    });
    const { token } = await createToken(withGrants, { actor: "test", publicUrl: "http://cp", input: { labels: { app: "shop" } } });
    const { nodeId } = await enrolNode(withGrants, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory });
    const node = await getNode(withGrants, nodeId);
    expect(node.declaredVersion).toBe(1);
    expect((node.declaration!.resources as { id: string }[]).map((r) => r.id)).toEqual(["db"]);
    expect(await withGrants.db.select().from(grantsTable).where(eq(grantsTable.nodeId, nodeId))).toHaveLength(1);
    // The oracle keeps the grant and the declaration as they are.
    const oracle = await withGrants.db.transaction(async (tx) => {
      await lockCompilerShared(tx);
      return recompileNode(tx, nodeId, { roles: await loadRoles(tx), actor: "oracle", grants: withGrants.grants });
    });
    expect(oracle.changed).toBe(false);
    expect(await withGrants.db.select().from(grantsTable).where(eq(grantsTable.nodeId, nodeId))).toHaveLength(1);
    await deleteRole(withGrants, { actor: "test", name: "shop" });
  });

  it("refuses a token revoked or used up after it was last read, with the reason", async () => {
    const { id, token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses: 5 } });
    const again = () => enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory });
    await again();
    await revokeToken(deps, { actor: "test", id });
    await expect(again()).rejects.toMatchObject({ code: "TOKEN_REVOKED" });
    const used = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses: 2 } });
    const viaUsed = () => enrolNode(deps, { token: used.token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory });
    await viaUsed();
    await viaUsed();
    await expect(viaUsed()).rejects.toMatchObject({ code: "TOKEN_USED" });
    expect((await deps.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.tokenId, used.id))).length).toBe(2);
  });

  it("gives exactly maxUses nodes for many concurrent enrolments with one token", async () => {
    const { id, token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses: 3 } });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    for (const r of results) if (r.status === "rejected") expect((r.reason as MeshError).code).toBe("TOKEN_USED");
    const [row] = await deps.db.select({ uses: enrolmentTokens.uses }).from(enrolmentTokens).where(eq(enrolmentTokens.id, id));
    expect(row!.uses).toBe(3);
    expect((await deps.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.tokenId, id))).length).toBe(3);
  });

  // PGlite has one connection: two open transactions at once need a real server.
  it.runIf(engine === "postgres")("lets an enrolment through while another single-node compile holds the lock, not while a role change does", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const single = deps.db.transaction(async (tx) => {
      await lockCompilerShared(tx);
      locked();
      await held;
    });
    await isLocked;
    // Completes while the other compile still holds its share.
    await expect(enrol({})).resolves.toMatchObject({ nodeId: expect.any(String) });
    release();
    await single;

    let releaseRole!: () => void;
    const roleHeld = new Promise<void>((r) => (releaseRole = r));
    let roleLocked!: () => void;
    const isRoleLocked = new Promise<void>((r) => (roleLocked = r));
    const roleChange = deps.db.transaction(async (tx) => {
      await lockCompiler(tx);
      roleLocked();
      await roleHeld;
    });
    await isRoleLocked;
    // Behind an exclusive holder the shared lock is not granted: a lock_timeout says so without waiting on time.
    const blocked = deps.db.transaction(async (tx) => {
      await tx.execute(sql`set local lock_timeout = '200ms'`);
      await lockCompilerShared(tx);
    });
    await expect(blocked).rejects.toThrow();
    releaseRole();
    await roleChange;
  });
});
