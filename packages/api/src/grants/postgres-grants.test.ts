// Grants against real Postgres: the node's credential connects; after revoke it
// does not, and its open session is gone.
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import postgres from "postgres";
import { createPostgresDatabase, createTestDatabase, type TestDatabase } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "../services/create-token";
import { enrolNode } from "../services/enrol-node";
import { upsertRole } from "../services/roles";
import { getNode } from "../services/get-node";
import { revokeNode } from "../services/lifecycle";
import { createPostgresGrantProvider } from "./postgres-provider";

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;

withPostgres("postgres grants", () => {
  let t: TestDatabase;
  let target: { url: string; drop(): Promise<void> };
  let provider: ReturnType<typeof createPostgresGrantProvider>;
  let deps: Deps;

  beforeAll(async () => {
    t = await createTestDatabase("postgres");
    target = await createPostgresDatabase("mesh_grant_target");
    const admin = postgres(target.url, { max: 1, onnotice: () => {} });
    await admin`create table orders (id int primary key, item text)`;
    await admin`insert into orders values (1, 'tea')`;
    await admin.end();
    provider = createPostgresGrantProvider(target.url);
    deps = { db: t.database.db, log: pino({ level: "silent" }), grants: { postgres: provider } };
  });
  afterAll(async () => {
    for (const principal of (await provider?.list()) ?? []) if (principal.startsWith("mesh_")) await provider.revoke(principal).catch(() => {});
    await provider?.close();
    await target?.drop();
    await t?.drop();
  });

  it("issues a per-node login, delivers it as a 0600 file, and revoking ends it", async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: { app: "shop" } } });
    const publicKey = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "der" }).toString("base64");
    const profile = { hostname: "g", os: "debian", osRelease: "12", osVersionId: "12", kernel: "6", arch: "x86_64", cpus: 1, memoryBytes: 1, diskBytes: 1, initSystem: "systemd", packageManager: "dpkg", machineId: crypto.randomUUID(), hostVersion: "0" };
    const { nodeId } = await enrolNode(deps, { token, publicKey, profile, inventory: { packages: [], units: [], ports: [], mounts: [], truncated: false } });
    await upsertRole(deps, { actor: "test", input: { name: "shop", selector: { labels: { app: "shop" } }, resources: [], grants: [{ id: "shop-db", provider: "postgres", path: "/etc/shop/db.env" }] } });

    const node = await getNode(deps, nodeId);
    const file = (node.declaration?.resources as Array<{ id: string; mode: string; content: string }>).find((r) => r.id === "shop-db")!;
    expect(file.mode).toBe("0600");
    const url = /^DATABASE_URL=(.*)$/m.exec(file.content)![1]!;
    const session = postgres(url, { max: 1, onnotice: () => {} });
    expect(await session`select item from orders`).toEqual([{ item: "tea" }]);
    await expect(session`insert into orders values (2, 'cake')`).rejects.toThrow(/permission denied/);

    const revoked = await revokeNode(deps, { actor: "test", id: nodeId });
    expect(revoked.grantsRevoked).toBe(1);
    await expect(session`select 1`).rejects.toThrow();
    await session.end({ timeout: 1 }).catch(() => {});
    const again = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    await expect(again`select 1`).rejects.toThrow(/authentication|does not exist|password/);
    await again.end({ timeout: 1 }).catch(() => {});
  });
});
