// The provider is made to match the grants table only after commit, and a provider
// that fails is retried: with an in-memory provider, on PGlite and Postgres.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { eq, isNull } from "drizzle-orm";
import { grants } from "@mesh/db";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { enrolTestNode } from "../testing/test-nodes";
import { upsertRole } from "../services/roles";
import { revokeNode } from "../services/lifecycle";
import { createSecretBox } from "../secrets/secret-box";
import { memoryGrantProvider } from "../testing/memory-grant-provider";
import { settleGrants } from "./settle-grants";

describe.each(testEngines())("settling grants (%s)", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let mem: ReturnType<typeof memoryGrantProvider>;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    mem = memoryGrantProvider();
    deps = { db: t.database.db, log: pino({ level: "silent" }), grants: { providers: { postgres: mem.provider }, secrets: createSecretBox(randomBytes(32)) } };
  });
  afterAll(() => t?.drop());

  it("issues after commit, retries a failed provider, and a committed revocation is finished later", async () => {
    const { nodeId } = await enrolTestNode(deps, { labels: { app: "a" } });

    mem.setDown(true);
    await upsertRole(deps, {
      actor: "test",
      input: { name: "a", selector: { labels: { app: "a" } }, resources: [], grants: [{ id: "db", provider: "postgres", path: "/etc/a.env" }] },
    });
    expect(mem.held.size).toBe(0);
    expect(await settleGrants(deps)).toBe(1);
    expect(await deps.db.select().from(grants).where(isNull(grants.settledAt))).toHaveLength(1);

    mem.setDown(false);
    expect(await settleGrants(deps)).toBe(0);
    const [row] = await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId));
    expect(row!.settledAt).not.toBeNull();
    expect(mem.held.get(row!.principal)).toBe(deps.grants!.secrets.open(row!.secret!, row!.principal));

    mem.setDown(true);
    expect((await revokeNode(deps, { actor: "test", id: nodeId })).grantsRevoked).toBe(0);
    const [revoked] = await deps.db.select().from(grants).where(eq(grants.nodeId, nodeId));
    expect(revoked!.revokedAt).not.toBeNull();
    expect(revoked!.secret).toBeNull();
    expect(mem.held.has(revoked!.principal)).toBe(true);
    mem.setDown(false);
    expect(await settleGrants(deps)).toBe(0);
    expect(mem.held.has(revoked!.principal)).toBe(false);
  });
});
