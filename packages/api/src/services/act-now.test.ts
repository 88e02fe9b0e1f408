// Act now (issue 13), the services against a real database: reconcile now (counts, one event per
// call), correct/accept drift, forget, and the bulk actions (set-based, one event per call), with
// every class of bad input refused. Delivery over real links is in gateway/reconcile-now.test.ts.
import { describe, expect, it } from "vitest";
import { and, eq, inArray } from "drizzle-orm";
import { events, nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import { HOST_FEATURE } from "@mesh/protocol";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { upsertRole } from "./roles";
import { getNode } from "./get-node";
import { listNodes } from "./list-nodes";
import { countNodes } from "./count-nodes";
import { markConnected } from "./presence";
import { retireNode, revokeNode } from "./lifecycle";
import { reconcileNodes, reconcileRole, resolveDrift } from "./reconcile-now";
import { bulkRetire, bulkRevoke, bulkSetLabels, forgetNodes } from "./bulk-actions";
import { MAX_NODES_PER_CALL } from "./node-set";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { createCaller } from "../root";
import { createTrpcContext } from "../trpc";
import { ensureAdminCredentials } from "../auth/credentials";
import { createLoginLimits, loginUser } from "../auth/login-user";
import { SESSION_COOKIE } from "../auth/sessions";

describe.each(testEngines())("act now on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (labels: Record<string, string> = {}) => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels } });
    const { nodeId } = await enrolNode(deps, {
      token,
      publicKey: testKeyPair().publicKey,
      profile: testProfile(crypto.randomUUID()),
      inventory: emptyInventory(),
    });
    return nodeId;
  };
  /** Linked now through a gateway, with a host naming these features. */
  const link = async (nodeId: string, features: string[]) => {
    await deps.db.update(nodes).set({ hostFeatures: features }).where(eq(nodes.id, nodeId));
    expect(await markConnected(deps, nodeId, "gw-test", "0.2.0")).toBe(true);
    if (features.length > 0) await deps.db.update(nodes).set({ hostFeatures: features }).where(eq(nodes.id, nodeId));
  };
  const eventsOf = (action: string) => deps.db.select().from(events).where(eq(events.action, action));

  it("node.reconcile answers how many were asked, are offline and too old, in one event for the call", async () => {
    const [fresh, old, away] = [await enrol(), await enrol(), await enrol()];
    await link(fresh, [HOST_FEATURE.reconcileNow]);
    await link(old, []);
    const answer = await reconcileNodes(deps, { actor: "user:admin", input: { ids: [fresh, old, away, fresh] } });
    expect(answer).toMatchObject({ asked: 3, sent: 1, offline: 1, tooOld: 1 });
    const [event] = await deps.db.select().from(events).where(eq(events.id, answer.eventId!));
    expect(event).toMatchObject({ actor: "user:admin", action: "node.reconcile", nodeId: null });
    expect(event!.data).toMatchObject({ asked: 3, sent: 1, offline: 1, tooOld: 1, nodeIds: [fresh] });
    expect((await eventsOf("node.reconcile")).length).toBe(1);
  });

  it("refuses bad node.reconcile input: no ids, too many, not uuids, unknown ids", async () => {
    await expect(reconcileNodes(deps, { actor: "a", input: { ids: [] } })).rejects.toThrow(/at least one node/);
    const many = Array.from({ length: MAX_NODES_PER_CALL + 1 }, () => crypto.randomUUID());
    await expect(reconcileNodes(deps, { actor: "a", input: { ids: many } })).rejects.toThrow(/at most 1000 nodes/);
    await expect(reconcileNodes(deps, { actor: "a", input: { ids: ["nope"] } })).rejects.toThrow();
    const unknown = crypto.randomUUID();
    await expect(reconcileNodes(deps, { actor: "a", input: { ids: [await enrol(), unknown] } })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining(unknown),
    });
  });

  it("role.reconcile counts the nodes whose current declaration includes the role, in one statement; an unknown role is refused", async () => {
    const a = await enrol({ tier: "rr" });
    const b = await enrol({ tier: "rr" });
    await enrol({ tier: "other" });
    await upsertRole(deps, {
      actor: "test",
      input: { name: "rr-web", selector: { labels: { tier: "rr" } }, resources: [{ type: "file", id: "motd", path: "/etc/rr", content: "x" }] },
    });
    await link(a, [HOST_FEATURE.reconcileNow]);
    const answer = await reconcileRole(deps, { actor: "user:admin", input: { name: "rr-web" } });
    expect(answer).toMatchObject({ asked: 2, sent: 1, offline: 1, tooOld: 0 });
    const [event] = await deps.db.select().from(events).where(eq(events.id, answer.eventId!));
    expect(event).toMatchObject({ action: "role.reconcile", target: "rr-web", data: expect.objectContaining({ role: "rr-web" }) });
    void b;
    await expect(reconcileRole(deps, { actor: "a", input: { name: "no-such-role" } })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(reconcileRole(deps, { actor: "a", input: { name: "" } })).rejects.toThrow();
  });

  it("correct and accept drift name onDrift: report resources of the node's declaration, and refuse anything else", async () => {
    const id = await enrol({ drift: "hand" });
    await upsertRole(deps, {
      actor: "test",
      input: {
        name: "hand-edits",
        selector: { labels: { drift: "hand" } },
        resources: [
          { type: "file", id: "watched", path: "/etc/watched", content: "x", onDrift: "report" },
          { type: "file", id: "fixed", path: "/etc/fixed", content: "y" },
        ],
      },
    });
    await expect(resolveDrift(deps, { actor: "a", how: "correct", input: { id, resourceIds: ["watched"] } })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("not linked"),
    });
    await link(id, [HOST_FEATURE.reconcileNow]);
    const answer = await resolveDrift(deps, { actor: "user:admin", how: "correct", input: { id, resourceIds: ["watched"] } });
    expect(answer).toMatchObject({ asked: 1, sent: 1 });
    const [event] = await deps.db.select().from(events).where(eq(events.id, answer.eventId!));
    expect(event).toMatchObject({ action: "node.correct-drift", nodeId: id, data: expect.objectContaining({ correct: ["watched"], nodeIds: [id] }) });
    const accepted = await resolveDrift(deps, { actor: "user:admin", how: "accept", input: { id, resourceIds: ["watched"] } });
    expect((await deps.db.select().from(events).where(eq(events.id, accepted.eventId!)))[0]).toMatchObject({
      action: "node.accept-drift",
      data: expect.objectContaining({ accept: ["watched"] }),
    });
    await expect(resolveDrift(deps, { actor: "a", how: "accept", input: { id, resourceIds: [] } })).rejects.toThrow(/at least one resource/);
    await expect(resolveDrift(deps, { actor: "a", how: "accept", input: { id, resourceIds: ["nothere"] } })).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("nothere"),
    });
    await expect(resolveDrift(deps, { actor: "a", how: "accept", input: { id, resourceIds: ["fixed"] } })).rejects.toMatchObject({
      code: "BAD_INPUT",
      message: expect.stringContaining("onDrift: report"),
    });
    const old = await enrol({ drift: "hand" });
    await link(old, []);
    await expect(resolveDrift(deps, { actor: "a", how: "correct", input: { id: old, resourceIds: ["watched"] } })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("upgrade"),
    });
  });

  it("bulk set labels: one update, one event, and the fleet compile gives the nodes their new roles", async () => {
    const ids = [await enrol({ zone: "a", old: "x" }), await enrol({ zone: "b", old: "y" })];
    await upsertRole(deps, {
      actor: "test",
      input: { name: "bulk-web", selector: { labels: { tier: "bulk-web" } }, resources: [{ type: "file", id: "bw", path: "/etc/bw", content: "x" }] },
    });
    const result = await bulkSetLabels(deps, { actor: "user:admin", input: { ids, set: { tier: "bulk-web" }, remove: ["old"] } });
    expect(result).toMatchObject({ nodes: 2, changed: 2, conflicts: [] });
    const after = await Promise.all(ids.map((id) => getNode(deps, id)));
    expect(after.map((n) => n.labels)).toEqual([
      { zone: "a", tier: "bulk-web" },
      { zone: "b", tier: "bulk-web" },
    ]);
    expect(after.every((n) => n.declaration?.roles?.includes("bulk-web") || JSON.stringify(n.declaration).includes("bw"))).toBe(true);
    const [event] = await eventsOf("node.bulk-set-labels");
    expect(event!.data).toMatchObject({ nodes: 2, nodeIds: expect.arrayContaining(ids), set: { tier: "bulk-web" }, remove: ["old"] });
    await expect(bulkSetLabels(deps, { actor: "a", input: { ids, set: {}, remove: [] } })).rejects.toThrow(/at least one label/);
    await expect(bulkSetLabels(deps, { actor: "a", input: { ids, set: { "bad key!": "x" } } })).rejects.toThrow();
    await expect(bulkSetLabels(deps, { actor: "a", input: { ids, set: { a: "1" }, remove: ["a"] } })).rejects.toThrow(/both set and removed/);
  });

  it("bulk retire and revoke: the same rules as one node, refused whole when any node cannot, one event each", async () => {
    const [a, b, c] = [await enrol(), await enrol(), await enrol()];
    await revokeNode(deps, { actor: "test", id: c });
    await expect(bulkRetire(deps, { actor: "a", input: { ids: [a, c] } })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("revoked"),
    });
    expect((await getNode(deps, a)).state).toBe("disconnected");
    const before = (await getNode(deps, a)).declaredVersion;
    expect(await bulkRetire(deps, { actor: "user:admin", input: { ids: [a, b], keepResources: true } })).toMatchObject({ nodes: 2, state: "retiring" });
    const retiring = await getNode(deps, a);
    expect(retiring).toMatchObject({ state: "retiring", retireMode: "forget", declaredVersion: before + 1 });
    expect(retiring.declaration).toMatchObject({ version: before + 1, resources: [], final: "forget" });
    expect((await eventsOf("node.bulk-retire"))[0]!.data).toMatchObject({ nodes: 2, keepResources: true });
    await expect(bulkRevoke(deps, { actor: "a", input: { ids: [a, c] } })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await bulkRevoke(deps, { actor: "user:admin", input: { ids: [a, b] } })).toMatchObject({ nodes: 2, state: "revoked" });
    const states = await deps.db
      .select({ state: nodes.state })
      .from(nodes)
      .where(inArray(nodes.id, [a, b]));
    expect(states.map((s) => s.state)).toEqual(["revoked", "revoked"]);
    expect((await eventsOf("node.bulk-revoke")).length).toBe(1);
  });

  it("forget: retired and revoked nodes leave the list and the counts, their audit stays; a retiring node is revoked as it is forgotten", async () => {
    const [live, revoked, retiring] = [await enrol({ f: "1" }), await enrol({ f: "1" }), await enrol({ f: "1" })];
    await revokeNode(deps, { actor: "test", id: revoked });
    await retireNode(deps, { actor: "test", input: { id: retiring } });
    await expect(forgetNodes(deps, { actor: "a", input: { ids: [live] } })).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("disconnected"),
    });
    const countsBefore = await countNodes(deps);
    expect(await forgetNodes(deps, { actor: "user:admin", input: { ids: [revoked, retiring] } })).toMatchObject({ nodes: 2, revoked: 1 });
    const listed = await listNodes(deps, { label: "f=1" });
    expect(listed.items.map((n) => n.id)).toEqual([live]);
    expect(listed.total).toBe(1);
    const countsAfter = await countNodes(deps);
    expect(countsAfter.total).toBe(countsBefore.total - 2);
    const forgotten = await getNode(deps, retiring);
    expect(forgotten.state).toBe("revoked");
    expect(forgotten.forgottenAt).not.toBeNull();
    // Its audit history stays, the forget included.
    const history = await deps.db
      .select()
      .from(events)
      .where(and(eq(events.nodeId, revoked), eq(events.action, "node.revoke")));
    expect(history.length).toBe(1);
    expect((await eventsOf("node.forget"))[0]!.data).toMatchObject({ nodes: 2, revoked: [retiring] });
    // Forgetting again is harmless: the first time is kept.
    const first = (await getNode(deps, revoked)).forgottenAt;
    await forgetNodes(deps, { actor: "user:admin", input: { ids: [revoked] } });
    expect((await getNode(deps, revoked)).forgottenAt).toEqual(first);
  });
});

describe.each(testEngines())("act now through the API on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  it("refuses a viewer every act-now procedure with FORBIDDEN, and bad input with BAD_REQUEST", async () => {
    await ensureAdminCredentials(deps.db, { password: "admin-password-1", apiKey: "env-admin-api-key-0123" });
    const callerWith = async (headers: Record<string, string>) =>
      createCaller(await createTrpcContext({ deps, headers: new Headers(headers), publicUrl: "http://cp" }));
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    await admin.user.create({ name: "vic", role: "viewer", password: "viewer-password" });
    const { sessionId } = await loginUser(deps.db, createLoginLimits(), { name: "vic", password: "viewer-password" });
    const viewer = await callerWith({ cookie: `${SESSION_COOKIE}=${sessionId}` });
    const ids = [crypto.randomUUID()];
    const forbidden = { code: "FORBIDDEN" };
    await expect(viewer.node.reconcile({ ids })).rejects.toMatchObject(forbidden);
    await expect(viewer.role.reconcile({ name: "web" })).rejects.toMatchObject(forbidden);
    await expect(viewer.node.correctDrift({ id: ids[0]!, resourceIds: ["a"] })).rejects.toMatchObject(forbidden);
    await expect(viewer.node.acceptDrift({ id: ids[0]!, resourceIds: ["a"] })).rejects.toMatchObject(forbidden);
    await expect(viewer.node.forget({ ids })).rejects.toMatchObject(forbidden);
    await expect(viewer.node.bulkSetLabels({ ids, set: { a: "b" } })).rejects.toMatchObject(forbidden);
    await expect(viewer.node.bulkRetire({ ids })).rejects.toMatchObject(forbidden);
    await expect(viewer.node.bulkRevoke({ ids })).rejects.toMatchObject(forbidden);
    const bad = { code: "BAD_REQUEST" };
    await expect(admin.node.reconcile({ ids: [] })).rejects.toMatchObject(bad);
    await expect(admin.node.bulkRevoke({ ids: Array.from({ length: MAX_NODES_PER_CALL + 1 }, () => crypto.randomUUID()) })).rejects.toMatchObject(bad);
    await expect(admin.node.forget({ ids: ["not-a-uuid"] })).rejects.toMatchObject(bad);
    await expect(admin.node.reconcile({ ids })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
