// role.plan against what hosts reported (issue 14, "the plan knows the machines"): nodes and
// reports through the real services; create vs update vs adopt vs unchanged vs certain failure,
// and nodes grouped by their list of changes.
import { describe, expect, it } from "vitest";
import { Resource, type Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { upsertRole } from "./roles";
import { planRole } from "./plan-role";
import { planLabels } from "./plan-labels";
import { recordReport } from "./record-report";
import { declaredState, stateDigest } from "./declared-state";
import { testReport } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { testEngines } from "@mesh/db/testing";
import { enrolTestNode } from "../testing/test-nodes";

const file = (id: string, content: string, more: Record<string, unknown> = {}) =>
  Resource.parse({ type: "file", id, path: `/srv/www/${id}`, content, ...more });
const owned = (...rs: Resource[]) => rs.map((r) => ({ id: r.id, type: r.type, digest: stateDigest(declaredState(r)) }));
const report = (parts: Partial<Report>): Report => testReport(1, { ...parts });

describe.each(testEngines())("role.plan against reports on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (name: string, labels: Record<string, string>) =>
    (await enrolTestNode(deps, { labels, machineId: crypto.randomUUID().replace(/-/g, ""), profile: { hostname: name } })).nodeId;

  it("tells create, update, adopt, unchanged and certain failure from the hosts' reports, and groups nodes alike", async () => {
    const index1 = file("index", "v1\n");
    const motd = file("motd", "hello");
    await upsertRole(deps, { actor: "test", input: { name: "www", selector: { labels: { tier: "web" } }, resources: [index1, motd] } });
    // applied-1..3: hold index v1 and motd; fresh: never got index (its parent was missing); adopted: already has v2; silent: never reported.
    const applied = await Promise.all(["applied-1", "applied-2", "applied-3"].map((n) => enrol(n, { tier: "web" })));
    const fresh = await enrol("fresh", { tier: "web" });
    const adopted = await enrol("adopted", { tier: "web" });
    const silent = await enrol("silent", { tier: "web" });
    await enrol("db-1", { tier: "db" });
    await enrol("db-2", { tier: "db" });
    const index2 = file("index", "v2\n");
    for (const id of applied) await recordReport(deps, id, report({ owned: owned(index1, motd) }));
    await recordReport(
      deps,
      fresh,
      report({
        owned: owned(motd),
        errors: [{ id: "index", message: "parent directory of /srv/www/index does not exist (declare it as a directory resource)" }],
      }),
    );
    await recordReport(deps, adopted, report({ owned: owned(index2, motd) }));
    void silent;

    const plan = await planRole(deps, { input: { name: "www", selector: { labels: { tier: "web" } }, resources: [index2, motd] } });
    const byLabel = Object.fromEntries(plan.groups.map((g) => [g.label, g]));
    expect(plan.groups.map((g) => [g.count, g.label])).toEqual([
      [3, "update index"],
      [2, "unchanged"],
      [1, "adopt index"],
      [1, "fail: parent directory /srv/www missing"],
      [1, "update index"],
    ]);
    expect(byLabel.unchanged!.examples.map((e) => e.name).sort()).toEqual(["db-1", "db-2"]);
    const updated = plan.groups.find((g) => g.label === "update index" && g.reported)!;
    expect(updated.examples.map((e) => e.name).sort()).toEqual(["applied-1", "applied-2", "applied-3"]);
    expect(plan.diffs[updated.changes[0]!.diff!]!.lines).toEqual(["@@ -1,1 +1,1 @@", "-v1", "+v2"]);
    expect(plan.groups.find((g) => g.label === "update index" && !g.reported)!.examples.map((e) => e.name)).toEqual(["silent"]);
    expect(byLabel["fail: parent directory /srv/www missing"]!.changes).toEqual([
      expect.objectContaining({ id: "index", action: "create", fails: "parent directory /srv/www missing at the last report" }),
    ]);
    expect(byLabel["fail: parent directory /srv/www missing"]!.fails).toEqual(["create index: parent directory /srv/www missing at the last report"]);
    expect(plan.summary).toBe("5 groups of nodes: 3 update index, 2 unchanged, 1 adopt index, 1 fail: parent directory /srv/www missing, 1 update index");
    expect(plan.changedCount).toBe(6);
    expect(plan.allAtOnceWarning).toBeNull();

    // The label edit plan reads the same report: moving db-1 to web creates; for `fresh`, the fail shows.
    const labels = await planLabels(deps, { id: fresh, labels: { tier: "db" } });
    expect(labels.changes.map((c) => `${c.action} ${c.id}`)).toEqual(["remove motd"]);
  });

  it("warns when the change reaches more than ALL_AT_ONCE_WARNING_NODES nodes", async () => {
    for (let i = 0; i < 21; i++) await enrol(`many-${i}`, { tier: "many" });
    const plan = await planRole(deps, { input: { name: "many", selector: { labels: { tier: "many" } }, resources: [file("x", "1")] } });
    const changed = plan.groups.filter((g) => g.label !== "unchanged");
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({ count: 21, label: "create x", reported: false });
    expect(changed[0]!.examples).toHaveLength(5);
    expect(plan.allAtOnceWarning).toMatch(/reaches 21 nodes/);
  });
});
