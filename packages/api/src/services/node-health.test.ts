// Node health (issue 13): the one SQL definition, checked row by row against a real database, and
// the report figures it reads (skipped, rejected, last changed) as the report batch writes them.
import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { recordReport } from "./record-report";
import { countNodes } from "./count-nodes";
import { listNodes } from "./list-nodes";
import { nodeHealth, STALE_AFTER_SECONDS, type NodeHealth } from "./node-health";
import { testReport } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { enrolTestNode } from "../testing/test-nodes";

type Row = Partial<typeof nodes.$inferInsert>;
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);
const linked: Row = { state: "enrolled", lastSeenAt: ago(60), lastCheckedAt: ago(30), declaredVersion: 2, appliedVersion: 2 };

/** Each row: what the node holds, and the health it must have. */
const TABLE: Array<[string, Row, NodeHealth | null]> = [
  ["enrolled, never linked", { state: "disconnected", lastSeenAt: null, lastCheckedAt: null }, "pending"],
  ["linked, applied, nothing wrong", linked, "healthy"],
  ["linked, its current version not applied yet", { ...linked, appliedVersion: 1 }, "applying"],
  ["linked, no report yet since the link came up", { ...linked, lastCheckedAt: null, appliedVersion: 0 }, "applying"],
  ["applied with drift", { ...linked, driftCount: 2 }, "drifted"],
  ["applied with errors", { ...linked, errorCount: 1 }, "failing"],
  ["applied with skipped resources", { ...linked, skippedCount: 1 }, "failing"],
  ["errors and drift: failing wins", { ...linked, errorCount: 1, driftCount: 3 }, "failing"],
  ["refused its current declaration", { ...linked, appliedVersion: 1, rejectedVersion: 2 }, "failing"],
  ["refused an older declaration, now applying a newer one", { ...linked, declaredVersion: 3, appliedVersion: 1, rejectedVersion: 2 }, "applying"],
  ["roles in conflict", { ...linked, conflicts: [{ key: "file:/etc/x", roles: ["a", "b"] }] }, "conflicted"],
  ["conflicted and never linked", { state: "disconnected", lastSeenAt: null, conflicts: [{ key: "file:/etc/x", roles: ["a", "b"] }] }, "conflicted"],
  ["linked once, not linked now", { ...linked, state: "disconnected" }, "stale"],
  [
    "linked, nothing heard past the threshold",
    { ...linked, lastSeenAt: ago(STALE_AFTER_SECONDS + 600), lastCheckedAt: ago(STALE_AFTER_SECONDS + 60) },
    "stale",
  ],
  [
    "linked, checked just inside the threshold",
    { ...linked, lastSeenAt: ago(STALE_AFTER_SECONDS + 600), lastCheckedAt: ago(STALE_AFTER_SECONDS - 60) },
    "healthy",
  ],
  ["a replacement claim (state pending)", { state: "pending" }, null],
  ["retiring", { ...linked, state: "retiring", errorCount: 1 }, null],
  ["retired", { state: "retired" }, null],
  ["revoked", { state: "revoked" }, null],
];

describe.each(testEngines())("node health on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async () => (await enrolTestNode(deps)).nodeId;
  const healthOf = async (id: string) => (await deps.db.select({ health: nodeHealth }).from(nodes).where(eq(nodes.id, id)))[0]!.health;
  const report = (declarationVersion: number, extra: Partial<Report> = {}) => testReport(declarationVersion, extra);

  it.each(TABLE)("%s", async (_name, row, expected) => {
    const id = await enrol();
    await deps.db.update(nodes).set(row).where(eq(nodes.id, id));
    expect(await healthOf(id)).toBe(expected);
    // The list filters by the same expression and returns it.
    const page = await listNodes(deps, { limit: 500, ...(expected ? { health: expected } : {}) });
    if (expected) expect(page.items.find((n) => n.id === id)?.health).toBe(expected);
  });

  it("counts every node in its health, and sorts worst first", async () => {
    const counts = await countNodes(deps);
    const listed = await listNodes(deps, { limit: 500 });
    const byHealth: Record<string, number> = {};
    for (const n of listed.items) if (n.health) byHealth[n.health] = (byHealth[n.health] ?? 0) + 1;
    for (const [h, n] of Object.entries(counts.byHealth)) expect(n, h).toBe(byHealth[h] ?? 0);
    const sorted = await listNodes(deps, { limit: 500, sort: "health" });
    expect(sorted.items[0]!.health).toBe("conflicted");
    expect(sorted.items.at(-1)!.health).toBeNull();
  });

  it("reads skipped resources and a refused version from the stored report, and says when the report last changed", async () => {
    const id = await enrol();
    await deps.db
      .update(nodes)
      .set({ ...linked, declaredVersion: 1, appliedVersion: 0 })
      .where(eq(nodes.id, id));
    await recordReport(deps, id, report(1, { skipped: [{ id: "file:/b", reason: "file:/a failed" }], errors: [] }));
    expect(await healthOf(id)).toBe("failing");
    const [first] = await deps.db.select({ changed: nodes.lastChangedAt, skipped: nodes.skippedCount }).from(nodes).where(eq(nodes.id, id));
    expect(first!.skipped).toBe(1);
    expect(first!.changed).not.toBeNull();

    // Unchanged: nothing written, so not changed (last checked is the gateway's batched time).
    expect(await recordReport(deps, id, report(1, { skipped: [{ id: "file:/b", reason: "file:/a failed" }] }))).toBe(false);
    const [same] = await deps.db.select({ changed: nodes.lastChangedAt }).from(nodes).where(eq(nodes.id, id));
    expect(same!.changed!.getTime()).toBe(first!.changed!.getTime());

    await deps.db.update(nodes).set({ lastChangedAt: sql`now() - interval '1 hour'` }).where(eq(nodes.id, id));
    await recordReport(deps, id, report(1));
    expect(await healthOf(id)).toBe("healthy");
    const [after] = await deps.db.select({ changed: nodes.lastChangedAt, skipped: nodes.skippedCount }).from(nodes).where(eq(nodes.id, id));
    expect(after!.skipped).toBe(0);
    expect(Date.now() - after!.changed!.getTime()).toBeLessThan(60_000);

    // The host refuses v2 whole: it reports v1 (held) and names v2.
    await deps.db.update(nodes).set({ declaredVersion: 2 }).where(eq(nodes.id, id));
    await recordReport(deps, id, report(1, { rejectedVersion: 2 }));
    expect(await healthOf(id)).toBe("failing");
  });
});
