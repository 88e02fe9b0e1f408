// Every public procedure's answer passes its .output() schema on a fleet with something in it: an
// enrolled node that reported (owned, drift, errors, skipped), roles with inline content, a staged
// rollout, tokens, keys, users, webhooks; as an admin and as a viewer (redacted content). A service
// that returned a field its schema does not name, or lacked one it does, fails here (the schemas are strict).
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { HOST_FEATURE } from "@mesh/protocol";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createCaller } from "../root";
import { createTrpcContext } from "../trpc";
import { ensureAdminCredentials } from "../auth/credentials";
import { enrolNode } from "../services/enrol-node";
import { recordReport } from "../services/record-report";
import { testKeyPair, testProfile, testReport } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

const sha = (n: number) => n.toString(16).padStart(64, "0");
const ADMIN_KEY = "outputs-admin-api-key-0123";

describe.each(testEngines())("procedure outputs on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));
  const callerWith = async (key: string) =>
    createCaller(await createTrpcContext({ deps, headers: new Headers({ authorization: `Bearer ${key}` }), publicUrl: "http://cp" }));

  it("answers node, token, role, event, apiKey, alert, user and rollout procedures within their schemas", async () => {
    await ensureAdminCredentials(deps.db, { password: "admin-password-1", apiKey: ADMIN_KEY });
    const admin = await callerWith(ADMIN_KEY);

    const issued = await admin.token.create({ labels: { group: "outputs" }, maxUses: 5 });
    expect(issued.command).toContain("mesh-host");
    const inventory = {
      packages: [{ name: "nginx", version: "1.22" }],
      units: [{ name: "nginx.service", state: "active" }],
      ports: [{ proto: "tcp" as const, port: 80 }],
      mounts: [{ source: "/dev/sda1", target: "/", fstype: "ext4" }],
      truncated: false,
    };
    const enrol = async (machineId = crypto.randomUUID()) =>
      (
        await enrolNode(
          deps,
          { token: issued.token, publicKey: testKeyPair().publicKey, profile: testProfile(machineId), inventory },
          { address: "203.0.113.7" },
        )
      ).nodeId;
    const machineId = crypto.randomUUID();
    const nodeId = await enrol(machineId);
    const otherId = await enrol();
    await deps.db
      .update(nodes)
      .set({ state: "enrolled", gatewayId: "gw-outputs", hostFeatures: [HOST_FEATURE.reconcileNow] })
      .where(eq(nodes.id, nodeId));

    const resources = [
      { type: "directory" as const, id: "site", path: "/srv/site" },
      { type: "file" as const, id: "index", path: "/srv/site/index.html", content: "<h1>secret</h1>\n", after: ["site"], onDrift: "report" as const },
      { type: "file" as const, id: "blob", path: "/srv/site/blob", content: "AAEC", encoding: "base64" as const },
    ];
    expect((await admin.role.plan({ name: "web", selector: { labels: { group: "outputs" } }, resources })).matchedCount).toBe(2);
    const saved = await admin.role.upsert({ name: "web", selector: { labels: { group: "outputs" } }, resources, message: "first" });
    expect(saved.version).toBe(1);
    const [node] = await deps.db.select({ declaredVersion: nodes.declaredVersion }).from(nodes).where(eq(nodes.id, nodeId));
    await recordReport(
      deps,
      nodeId,
      testReport(node!.declaredVersion, {
        owned: [
          { id: "site", type: "directory", digest: sha(1) },
          { id: "index", type: "file", digest: sha(2), adopted: true },
        ],
        drift: [{ id: "index", type: "file", declared: sha(3), observed: sha(2), description: "content differs", corrected: false }],
        errors: [
          { id: "blob", message: "disk full" },
          { id: null, message: "a note for the whole run" },
        ],
      }),
    );
    const staged = await admin.role.upsert({
      name: "web",
      selector: { labels: { group: "outputs" } },
      resources: [...resources, { type: "package", id: "curl", name: "curl" }],
      rollout: { mode: "staged", canary: { count: 1 }, waves: { size: 1 }, waveTimeoutSeconds: 60 },
    });
    expect(staged.rollout).not.toBeNull();

    const page = await admin.node.list({ sort: "health" });
    expect(page.total).toBe(2);
    expect((await admin.node.counts()).total).toBe(2);
    // Two machines claiming to be the first node (its machine-id, no proof of its key): pending claims.
    await enrol(machineId);
    await enrol(machineId);
    const detail = await admin.node.get({ id: nodeId });
    expect(detail.report?.errors).toHaveLength(2);
    expect(detail.declaration?.resources.find((r) => r.id === "index")).toMatchObject({ content: "<h1>secret</h1>\n" });
    expect(detail.inventory.packages).toEqual([{ name: "nginx", version: "1.22" }]);
    expect(detail.claims).toHaveLength(2);
    expect((await admin.role.list()).map((r) => r.name)).toEqual(["web"]);
    expect((await admin.rollout.list({})).items).toHaveLength(1);
    expect((await admin.rollout.get({ id: staged.rollout!.id })).waveCounts.length).toBeGreaterThan(0);

    expect((await admin.node.planLabels({ id: otherId, labels: { group: "other" } })).rolesLost).toEqual(["web"]);
    expect((await admin.node.setLabels({ id: otherId, labels: { group: "outputs", tier: "x" } })).labels.tier).toBe("x");
    expect((await admin.node.rename({ id: otherId, name: "renamed" })).name).toBe("renamed");
    expect((await admin.node.reconcile({ ids: [nodeId, otherId] })).asked).toBe(2);
    expect((await admin.node.correctDrift({ id: nodeId, resourceIds: ["index"] })).asked).toBe(1);
    expect((await admin.node.acceptDrift({ id: nodeId, resourceIds: ["index"] })).asked).toBe(1);
    expect((await admin.role.reconcile({ name: "web" })).asked).toBeGreaterThan(0);
    expect((await admin.node.bulkSetLabels({ ids: [otherId], set: { zone: "a" } })).nodes).toBe(1);

    const keys = await admin.apiKey.create({ name: "reader", role: "viewer" });
    const viewer = await callerWith(keys.key);
    expect((await viewer.user.me()).role).toBe("viewer");
    const seen = await viewer.node.get({ id: nodeId });
    expect(seen.declaration?.resources.find((r) => r.id === "index")).toMatchObject({ content: expect.stringMatching(/^mesh-redacted:sha256:/) });
    expect((await viewer.role.list())[0]).not.toHaveProperty("source");
    expect((await viewer.node.list()).items).toHaveLength(4);
    expect((await viewer.token.list()).items[0]!.nodes).toHaveLength(4);
    expect((await viewer.event.list({ limit: 5 })).items).toHaveLength(5);
    expect((await viewer.event.export({})).rows).toBeGreaterThan(0);

    expect((await admin.apiKey.list()).items.map((k) => k.name)).toContain("reader");
    expect((await admin.apiKey.rotate({ id: keys.id })).key).not.toBe(keys.key);
    expect(await admin.apiKey.revoke({ id: keys.id })).toEqual({ id: keys.id, revoked: true });

    const user = await admin.user.create({ name: "vera", role: "viewer", password: "viewer-password-1" });
    expect((await admin.user.list()).items.map((u) => u.name)).toContain("vera");
    expect((await admin.user.setPassword({ id: user.id, password: "viewer-password-2" })).changed).toBe(true);
    expect(await admin.user.revoke({ id: user.id })).toEqual({ id: user.id, revoked: true });

    const hook = await admin.alert.create({ name: "ops", url: "https://hooks.example.com/mesh", events: ["offline", "drifted"], offlineMinutes: 10 });
    expect((await admin.alert.list()).items[0]).toMatchObject({ name: "ops", enabled: true });
    expect(await admin.alert.setEnabled({ id: hook.id, enabled: false })).toEqual({ ok: true });
    expect(await admin.alert.test({ id: hook.id })).toEqual({ ok: true });
    expect((await admin.alert.attempts({ id: hook.id })).items).toEqual([]);
    expect(await admin.alert.delete({ id: hook.id })).toEqual({ ok: true });

    const { claims } = await admin.node.get({ id: nodeId });
    expect((await admin.node.get({ id: claims[0]!.id })).state).toBe("pending");
    expect((await admin.node.rejectReplacement({ id: claims[1]!.id })).state).toBe("revoked");
    expect((await admin.node.approveReplacement({ id: claims[0]!.id })).id).toBe(nodeId);

    const tokens = await admin.token.list();
    expect(tokens.items[0]).toMatchObject({ status: "unused", uses: 4, maxUses: 5 });
    const spare = await admin.token.create();
    expect(await admin.token.revoke({ id: spare.id })).toEqual({ id: spare.id, revoked: true });

    expect((await admin.node.retire({ id: otherId })).state).toBe("retiring");
    expect((await admin.node.revoke({ id: nodeId })).state).toBe("revoked");
    expect((await admin.node.bulkRevoke({ ids: [otherId] })).state).toBe("revoked");
    expect((await admin.node.bulkRetire({ ids: [await enrol()] })).state).toBe("retiring");
    expect((await admin.node.forget({ ids: [nodeId, otherId] })).nodes).toBe(2);
    expect((await admin.role.delete({ name: "web" })).changed).toBe(0);
  });
});
