// node.planLabels (issue 13): a label edit's plan before it is saved: roles gained and lost,
// resources created, updated (with a content diff) and removed, new conflicts; saves nothing.
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { upsertRole } from "./roles";
import { getNode } from "./get-node";
import { planLabels } from "./plan-labels";
import { planRole } from "./plan-role";
import { revokeNode } from "./lifecycle";
import { contentDiff } from "./plan-changes";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { testCaller } from "../testing/test-caller";

const file = (id: string, content: string) => ({ type: "file" as const, id, path: `/etc/${id}`, content });

describe.each(testEngines())("label plans on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));
  let nodeId = "";

  it("lists roles gained and lost and the resources created, updated and removed, and saves nothing", async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: { tier: "web" } } });
    nodeId = (await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() }))
      .nodeId;
    await upsertRole(deps, {
      actor: "test",
      input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("site", "a\nb\nc\n"), file("web-only", "w")] },
    });
    await upsertRole(deps, { actor: "test", input: { name: "db", selector: { labels: { tier: "db" } }, resources: [file("db-only", "d")] } });
    const before = await getNode(deps, nodeId);
    const plan = await planLabels(deps, { id: nodeId, labels: { tier: "db" } });
    expect(plan.compilable).toBe(true);
    expect(plan.rolesGained).toEqual(["db"]);
    expect(plan.rolesLost).toEqual(["web"]);
    expect(plan.changes.map((c) => `${c.action} ${c.id}`).sort()).toEqual(["create db-only", "remove site", "remove web-only"]);
    expect(plan.newConflicts).toEqual([]);
    const after = await getNode(deps, nodeId);
    expect(after.labels).toEqual(before.labels);
    expect(after.declaredVersion).toBe(before.declaredVersion);
  });

  it("names a conflict the labels would add", async () => {
    await upsertRole(deps, { actor: "test", input: { name: "other", selector: { labels: { other: "yes" } }, resources: [file("site", "other\n")] } });
    const plan = await planLabels(deps, { id: nodeId, labels: { tier: "web", other: "yes" } });
    expect(plan.rolesGained).toEqual(["other"]);
    expect(plan.newConflicts).toEqual([{ key: "site", roles: ["other", "web"] }]);
    expect(plan.conflicts).toEqual(plan.newConflicts);
  });

  it("shows a line diff for an updated file, in the role plan too", async () => {
    const plan = await planRole(deps, {
      input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("site", "a\nB\nc\n"), file("web-only", "w")] },
    });
    const update = plan.nodes[0]!.changes.find((c) => c.action === "update")!;
    expect(update.id).toBe("site");
    expect(plan.diffs[update.diff!]!.lines).toEqual(["@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"]);
    const big = contentDiff(Array.from({ length: 1000 }, (_, i) => `${i}\n`).join(""), Array.from({ length: 1000 }, (_, i) => `${i + 1}x\n`).join(""));
    expect(big.lines.length).toBe(400);
    expect(big.omitted).toBeGreaterThan(0);
  });

  it("changes nothing for a node that cannot receive a declaration", async () => {
    await revokeNode(deps, { actor: "test", id: nodeId });
    const plan = await planLabels(deps, { id: nodeId, labels: { tier: "db" } });
    expect(plan).toMatchObject({ compilable: false, changes: [], rolesGained: [] });
  });

  it("refuses bad input over the API: an unknown node, a bad label key, a non-admin", async () => {
    const caller = (role: "admin" | "viewer") => testCaller(deps, role, "someone");
    await expect(caller("admin").node.planLabels({ id: crypto.randomUUID(), labels: {} })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(caller("admin").node.planLabels({ id: nodeId, labels: { "bad key": "x" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller("admin").node.planLabels({ id: "not-a-uuid", labels: {} })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller("viewer").node.planLabels({ id: nodeId, labels: {} })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});
