// Services against a real database: PGlite, and Postgres when DATABASE_URL is set.
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import type { Profile } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { createToken } from "./create-token";
import { enrolNode } from "./enrol-node";
import { upsertRole, deleteRole } from "./roles";
import { getNode } from "./get-node";
import { recordReport } from "./record-report";

const profile = (machineId: string): Profile => ({
  hostname: "h-" + machineId.slice(0, 4), os: "debian", osRelease: "Debian 12", osVersionId: "12", kernel: "6.1", arch: "x86_64",
  cpus: 2, memoryBytes: 1, diskBytes: 1, initSystem: "systemd", packageManager: "dpkg", machineId, hostVersion: "0.1.0",
});
const publicKey = () => generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "der" }).toString("base64");
const inventory = { packages: [], units: [], ports: [], mounts: [], truncated: false };

describe.each(testEngines())("fleet services on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
  });
  afterAll(() => t?.drop());

  const enrol = async (labels: Record<string, string> = {}) => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels } });
    return enrolNode(deps, { token, publicKey: publicKey(), profile: profile(crypto.randomUUID()), inventory });
  };

  it("compiles a first declaration at enrolment and moves the version only when the hash changes", async () => {
    const { nodeId } = await enrol({ tier: "web" });
    expect((await getNode(deps, nodeId)).declaredVersion).toBe(1);
    const web = { name: "web", selector: { labels: { tier: "web" } }, resources: [{ type: "directory" as const, id: "d", path: "/srv" }] };
    await upsertRole(deps, { actor: "test", input: web });
    expect((await getNode(deps, nodeId)).declaredVersion).toBe(2);
    await upsertRole(deps, { actor: "test", input: web }); // same content: no new version
    expect((await getNode(deps, nodeId)).declaredVersion).toBe(2);
    await upsertRole(deps, { actor: "test", input: { ...web, selector: { labels: { tier: "db" } } } });
    const node = await getNode(deps, nodeId);
    expect(node.declaredVersion).toBe(3);
    expect(node.declaration?.resources).toEqual([]);
    await deleteRole(deps, { actor: "test", name: "web" });
  });

  it("gives exactly one node for many concurrent enrolments with one token", async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: {} });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => enrolNode(deps, { token, publicKey: publicKey(), profile: profile(crypto.randomUUID()), inventory })),
    );
    const ok = results.filter((r) => r.status === "fulfilled");
    expect(ok).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect((r.reason as MeshError).code).toBe("TOKEN_USED");
  });

  it("writes a report once, and again only when it changes", async () => {
    const { nodeId } = await enrol();
    const report = { declarationVersion: 1, owned: [], drift: [], errors: [], skipped: [], storeLost: false, reconciledAt: new Date().toISOString() };
    expect(await recordReport(deps, nodeId, report)).toBe(true);
    expect(await recordReport(deps, nodeId, { ...report, reconciledAt: new Date(Date.now() + 1000).toISOString() })).toBe(false);
    expect(await recordReport(deps, nodeId, { ...report, storeLost: true })).toBe(true);
    const node = await getNode(deps, nodeId);
    expect(node.storeLost).toBe(true);
    expect(node.events.map((e) => e.action)).toContain("node.store-lost");
  });
});
