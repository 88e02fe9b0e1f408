// A node's identity belongs to its key (issue 10, item 2), and facts a host asserts
// cannot buy it secrets (item 6): services against PGlite, and Postgres when set.
import { randomBytes, sign, type KeyObject } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { eq } from "drizzle-orm";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import { nodes } from "@mesh/db";
import { replacementProofMessage, tokenIdOf } from "@mesh/protocol";
import type { Deps } from "../deps";
import type { GrantProvider } from "../grants/provider";
import { createSecretBox } from "../secrets/secret-box";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { getNode } from "./get-node";
import { retireNode, revokeNode } from "./lifecycle";
import { approveReplacement, rejectReplacement } from "./node-replacement";
import { upsertRole, deleteRole } from "./roles";
import { planRole } from "./plan-role";
import { updateFacts } from "./update-facts";
import { listNodes } from "./list-nodes";
import { countNodes } from "./count-nodes";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";

const profile = testProfile;
const inventory = emptyInventory();
const keyPair = testKeyPair;

/** A provider that only remembers what it issued: enough to see who holds which grant. */
function memoryProvider(): GrantProvider & { issued: string[] } {
  const issued: string[] = [];
  return {
    name: "postgres",
    issued,
    mint: (principal) => `DATABASE_URL=postgres://${principal}:secret@db/app\n`,
    async issue(principal) {
      issued.push(principal);
    },
    async revoke() {},
    async list() {
      return issued;
    },
  };
}

describe.each(testEngines())("node identity on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    deps = {
      db: t.database.db,
      log: pino({ level: "silent" }),
      grants: { providers: { postgres: memoryProvider() }, secrets: createSecretBox(randomBytes(32)) },
    };
    await upsertRole(deps, {
      actor: "test",
      input: {
        name: "secret-db",
        selector: { labels: { app: "shop" } },
        resources: [{ type: "directory", id: "shop", path: "/srv/shop" }],
        grants: [{ id: "shop-db", provider: "postgres", path: "/etc/shop/db.env" }],
      },
    });
  }, 60_000);
  afterAll(() => t?.drop());

  const token = async (labels: Record<string, string> = {}) => (await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels } })).token;
  const enrol = async (
    machineId: string,
    opts: { labels?: Record<string, string>; keys?: ReturnType<typeof keyPair>; proof?: (tokenId: string, publicKey: string) => unknown } = {},
  ) => {
    const keys = opts.keys ?? keyPair();
    const tok = await token(opts.labels);
    const replaces = opts.proof?.(tokenIdOf(tok), keys.publicKey);
    const res = await enrolNode(
      deps,
      { token: tok, publicKey: keys.publicKey, profile: profile(machineId), inventory, ...(replaces ? { replaces: replaces as never } : {}) },
      { address: "203.0.113.7" },
    );
    return { ...res, keys };
  };
  const proofBy =
    (privateKey: KeyObject, nodeId: string, time = new Date().toISOString()) =>
    (tokenId: string, publicKey: string) => ({
      nodeId,
      time,
      signature: sign(null, Buffer.from(replacementProofMessage(nodeId, publicKey, tokenId, time)), privateKey).toString("base64"),
    });
  const row = async (id: string) => (await deps.db.select().from(nodes).where(eq(nodes.id, id)))[0]!;

  it("a token and a stolen machine-id make only a pending claim: the node keeps its key, labels, declaration and grants", async () => {
    const machineId = crypto.randomUUID();
    const real = await enrol(machineId, { labels: { app: "shop" } });
    const before = await getNode(deps, real.nodeId);
    expect((before.declaration!.resources as Array<{ id: string }>).map((r) => r.id)).toEqual(["shop", "shop-db"]);
    const attacker = await enrol(machineId, { labels: { tier: "evil" } });
    expect(attacker).toMatchObject({ nodeId: real.nodeId, awaitingApproval: true, labels: { tier: "evil" } });
    const after = await getNode(deps, real.nodeId);
    expect(after).toMatchObject({ state: before.state, labels: { app: "shop" }, declaredVersion: before.declaredVersion });
    expect((await row(real.nodeId)).publicKey).toBe(real.keys.publicKey);
    expect(after.claims).toHaveLength(1);
    expect(after.claims[0]).toMatchObject({ address: "203.0.113.7" });
    expect(after.events.map((e) => e.action)).toContain("node.replacement-claimed");
    const pending = await getNode(deps, after.claims[0]!.id);
    expect(pending).toMatchObject({ state: "pending", labels: { tier: "evil" }, replacesNodeId: real.nodeId, declaration: null, grants: [] });
    expect((await listNodes(deps, { state: "pending" })).items.map((n) => n.id)).toContain(pending.id);
    expect((await countNodes(deps)).byState.pending).toBeGreaterThan(0);
  });

  it("a retiring node is never revived; a revoked one stays revoked and the machine becomes a new node", async () => {
    const retiringId = crypto.randomUUID();
    const retiring = await enrol(retiringId);
    await retireNode(deps, { actor: "test", input: { id: retiring.nodeId } });
    await expect(enrol(retiringId, { proof: proofBy(retiring.keys.privateKey, retiring.nodeId) })).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await row(retiring.nodeId)).state).toBe("retiring");

    const revokedId = crypto.randomUUID();
    const revoked = await enrol(revokedId, { labels: { app: "shop" } });
    await revokeNode(deps, { actor: "test", id: revoked.nodeId });
    const again = await enrol(revokedId, { proof: proofBy(revoked.keys.privateKey, revoked.nodeId) });
    expect(again.nodeId).not.toBe(revoked.nodeId);
    expect(again.awaitingApproval).toBeUndefined();
    expect(await row(revoked.nodeId)).toMatchObject({ state: "revoked", publicKey: revoked.keys.publicKey });
    const fresh = await getNode(deps, again.nodeId);
    expect(fresh.labels).toEqual({});
    expect(fresh.grants).toEqual([]);
  });

  it("re-enrolment with a fresh proof by the old key replaces the key silently; a stale or foreign proof does not", async () => {
    const machineId = crypto.randomUUID();
    const first = await enrol(machineId, { labels: { app: "shop" } });
    const stale = enrol(machineId, { proof: proofBy(first.keys.privateKey, first.nodeId, new Date(Date.now() - 10 * 60_000).toISOString()) });
    await expect(stale).rejects.toMatchObject({ code: "BAD_INPUT", message: expect.stringMatching(/clock/) });
    const foreign = await enrol(machineId, { proof: proofBy(keyPair().privateKey, first.nodeId) });
    expect(foreign.awaitingApproval).toBe(true);
    expect((await row(first.nodeId)).publicKey).toBe(first.keys.publicKey);
    const second = await enrol(machineId, { labels: { zone: "b" }, proof: proofBy(first.keys.privateKey, first.nodeId) });
    const { keys: _keys, ...answer } = second;
    expect(answer).toEqual({ nodeId: first.nodeId, name: expect.any(String), labels: { app: "shop", zone: "b" } });
    expect((await row(first.nodeId)).publicKey).toBe(second.keys.publicKey);
    expect((await getNode(deps, first.nodeId)).events.map((e) => e.action)).toContain("node.re-enrol");
  });

  it("approval hands the node the claimed key and ends the pending node; rejection revokes it; both are audited", async () => {
    const machineId = crypto.randomUUID();
    const real = await enrol(machineId, { labels: { app: "shop" } });
    await enrol(machineId);
    await enrol(machineId);
    const [newer, older] = (await getNode(deps, real.nodeId)).claims;
    const rejected = await rejectReplacement(deps, { actor: "admin", input: { id: older!.id } });
    expect(rejected.state).toBe("revoked");
    expect((await row(real.nodeId)).publicKey).toBe(real.keys.publicKey);
    const newerKey = (await row(newer!.id)).publicKey;
    await approveReplacement(deps, { actor: "admin", input: { id: newer!.id } });
    const node = await getNode(deps, real.nodeId);
    expect(node).toMatchObject({ labels: { app: "shop" }, claims: [] });
    expect((await row(real.nodeId)).publicKey).toBe(newerKey);
    expect((await row(newer!.id)).state).toBe("retired");
    expect(node.events.map((e) => e.action)).toEqual(
      expect.arrayContaining(["node.replacement-approved", "node.replacement-rejected", "node.replacement-claimed"]),
    );
    await expect(approveReplacement(deps, { actor: "admin", input: { id: older!.id } })).rejects.toMatchObject({ code: "CONFLICT" });
    await expect(rejectReplacement(deps, { actor: "admin", input: { id: real.nodeId } })).rejects.toMatchObject({ code: "CONFLICT" });
  });

  it("refuses a role whose grants are selected by profile facts", async () => {
    const input = {
      name: "by-fact",
      selector: { profile: { hostname: "db-1" } },
      resources: [],
      grants: [{ id: "g", provider: "postgres" as const, path: "/etc/g.env" }],
    };
    await expect(upsertRole(deps, { actor: "test", input })).rejects.toMatchObject({ code: "BAD_INPUT", message: expect.stringMatching(/only labels/) });
    await expect(planRole(deps, { input })).rejects.toMatchObject({ code: "BAD_INPUT" });
    // without grants, profile facts may still select
    await upsertRole(deps, { actor: "test", input: { ...input, grants: [] } });
    await deleteRole(deps, { actor: "test", name: "by-fact" });
  });

  it("pins machine-id and hostname against a facts frame, and audits every role a facts change moved the node into or out of", async () => {
    const machineId = crypto.randomUUID();
    const { nodeId } = await enrol(machineId);
    await upsertRole(deps, {
      actor: "test",
      input: { name: "big", selector: { profile: { cpus: { gte: 8 } } }, resources: [{ type: "directory", id: "big", path: "/big" }] },
    });
    await updateFacts(deps, nodeId, { profile: profile(crypto.randomUUID(), { hostname: "someone-else", cpus: 16 }), inventory });
    let node = await getNode(deps, nodeId);
    expect(node.profile).toMatchObject({ machineId, hostname: "h-" + machineId.slice(0, 4), cpus: 16 });
    const refused = node.events.find((e) => e.action === "node.facts-refused");
    expect(refused).toMatchObject({ result: "refused", data: { claimed: { hostname: "someone-else" } } });
    expect(node.events.find((e) => e.action === "node.roles-changed")).toMatchObject({ data: { cause: "facts", entered: ["big"], left: [] } });
    await updateFacts(deps, nodeId, { profile: profile(machineId, { cpus: 2 }), inventory });
    node = await getNode(deps, nodeId);
    expect(node.events.find((e) => e.action === "node.roles-changed")).toMatchObject({ data: { entered: [], left: ["big"] } });
    await deleteRole(deps, { actor: "test", name: "big" });
  });
});
