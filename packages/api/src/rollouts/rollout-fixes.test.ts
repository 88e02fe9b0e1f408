// Rollout defects found in review, each pinned by a test: a rollback writes its version like any save
// (revoke-offline policy, conflict check, role.upsert event), a rollback never moves a node to a version
// it did not have, and a released node that lands in a conflict fails its wave.
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { events, nodes, roles, roleVersions, rollouts, rolloutNodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { useServiceDeps } from "../testing/service-deps";
import { recordReport } from "../services/record-report";
import { rolloutTick } from "./rollout-worker";
import { testReport } from "../testing/host-facts";
import { insertTestNodes } from "../testing/node-rows";
import { testCaller } from "../testing/test-caller";

describe.each(testEngines())("rollout fixes on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));
  const admin = () => testCaller(deps);
  const file = (id: string, path: string, content: string) => ({ type: "file" as const, id, path, content });
  const staged = { mode: "staged" as const, canary: { count: 1 }, waves: { size: 2 }, waveTimeoutSeconds: 60 };
  let group = 0;
  const makeNodes = async (n: number) => {
    const g = `g${++group}`;
    return { g, ids: await insertTestNodes(deps, g, n) };
  };
  const report = async (ids: string[]) => {
    for (const id of ids) {
      const [n] = await deps.db.select({ v: nodes.declaredVersion }).from(nodes).where(eq(nodes.id, id));
      await recordReport(deps, id, testReport(n!.v));
    }
  };
  const releasedOf = async (id: string) =>
    (await deps.db.select({ nodeId: rolloutNodes.nodeId, releasedAt: rolloutNodes.releasedAt }).from(rolloutNodes).where(eq(rolloutNodes.rolloutId, id)))
      .filter((r) => r.releasedAt)
      .map((r) => r.nodeId);

  it("a rollout's rollback writes the whole from-version (revoke-offline too) with a role.upsert event", async () => {
    const { g } = await makeNodes(3);
    const name = `motd-${g}`;
    await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("motd", "/etc/motd", "one\n")], revokeOfflineAfter: 120 });
    const saved = await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("motd", "/etc/motd", "two\n")], rollout: staged });
    const back = await admin().rollout.rollback({ id: saved.rollout!.id });
    const [v3] = await deps.db
      .select()
      .from(roleVersions)
      .where(and(eq(roleVersions.roleName, name), eq(roleVersions.version, back.version)));
    expect(v3!.revokeOfflineMinutes).toBe(120);
    expect((await deps.db.select().from(roles).where(eq(roles.name, name)))[0]!.revokeOfflineMinutes).toBe(120);
    const upserts = (await deps.db.select({ data: events.data }).from(events).where(eq(events.action, "role.upsert"))).map(
      (e) => e.data as { name: string; version: number; diff?: unknown; rollbackOf?: string },
    );
    const event = upserts.find((d) => d.name === name && d.version === back.version);
    expect(event).toMatchObject({ rollbackOf: saved.rollout!.id });
    expect(event!.diff).toBeTruthy();
  });

  it("a rollout's rollback that would put nodes into a conflict is refused unless confirmed", async () => {
    const { g } = await makeNodes(2);
    const name = `motd-${g}`;
    await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("motd", "/etc/motd", "one\n")] });
    const saved = await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("issue", "/etc/issue", "two\n")], rollout: staged });
    // Another role takes /etc/motd meanwhile: going back to v1 would conflict with it.
    await admin().role.upsert({ name: `other-${g}`, selector: { labels: { group: g } }, resources: [file("motd2", "/etc/motd", "other\n")] });
    await expect(admin().rollout.rollback({ id: saved.rollout!.id })).rejects.toThrow(/conflict/i);
    await expect(admin().rollout.rollback({ id: saved.rollout!.id, confirmConflicts: true })).resolves.toBeTruthy();
  });

  it("a released node that lands in a conflict fails its wave (the canary halts)", async () => {
    const { g, ids } = await makeNodes(3);
    const name = `motd-${g}`;
    await admin().role.upsert({ name: `other-${g}`, selector: { labels: { group: g } }, resources: [file("other", "/etc/other", "other\n")] });
    await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("motd", "/etc/motd", "one\n")] });
    const saved = await admin().role.upsert({
      name,
      selector: { labels: { group: g } },
      resources: [file("motd", "/etc/motd", "one\n"), file("clash", "/etc/other", "mine\n")],
      rollout: staged,
      confirmConflicts: true,
    });
    const canary = await releasedOf(saved.rollout!.id);
    expect(canary).toHaveLength(1);
    const [n] = await deps.db.select({ conflicts: nodes.conflicts }).from(nodes).where(eq(nodes.id, canary[0]!));
    expect(n!.conflicts).not.toEqual([]);
    // Every node reports what it has (the canary kept its old declaration: its report is "up to date").
    await report(ids);
    await rolloutTick(deps, "w-fixes", 10_000);
    const [r] = await deps.db.select().from(rollouts).where(eq(rollouts.id, saved.rollout!.id));
    expect(r!.state).toBe("halted");
    const [rn] = await deps.db
      .select({ outcome: rolloutNodes.outcome })
      .from(rolloutNodes)
      .where(and(eq(rolloutNodes.rolloutId, saved.rollout!.id), eq(rolloutNodes.nodeId, canary[0]!)));
    expect(rn!.outcome).toBe("failed");
  });

  it("refuses to roll back a rollout that superseded an unfinished one (its nodes had other versions), naming why", async () => {
    const { g, ids } = await makeNodes(4);
    const name = `motd-${g}`;
    const save = (content: string) =>
      admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("motd", "/etc/motd", content)], rollout: staged });
    await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("motd", "/etc/motd", "one\n")] });
    await save("two\n"); // A: v1 -> v2, only its canary released
    const b = await save("three\n"); // B: v2 -> v3, its unreleased nodes pinned at v1
    const [rn] = await deps.db
      .select({ n: rolloutNodes.nodeId })
      .from(rolloutNodes)
      .where(and(eq(rolloutNodes.rolloutId, b.rollout!.id), eq(rolloutNodes.fromVersion, 1)));
    expect(rn).toBeTruthy();
    const before = await deps.db
      .select({ id: nodes.id, v: nodes.declaredVersion })
      .from(nodes)
      .where(eq(nodes.labels, { group: g }));
    await expect(admin().rollout.rollback({ id: b.rollout!.id })).rejects.toThrow(/version 1 .*not 2.*never had/);
    expect(
      await deps.db
        .select({ id: nodes.id, v: nodes.declaredVersion })
        .from(nodes)
        .where(eq(nodes.labels, { group: g })),
    ).toEqual(before);
    expect((await deps.db.select().from(rollouts).where(eq(rollouts.id, b.rollout!.id)))[0]!.state).toBe("running");
    void ids;
  });

  it("a node revoked inside a wave is out of it (no timeout, no halt) and loses its pins", async () => {
    const { g } = await makeNodes(5);
    const name = `motd-${g}`;
    await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [file("motd", "/etc/motd", "one\n")] });
    const saved = await admin().role.upsert({
      name,
      selector: { labels: { group: g } },
      resources: [file("motd", "/etc/motd", "two\n")],
      rollout: { ...staged, haltAtFailurePercent: 10 },
    });
    const id = saved.rollout!.id;
    await report(await releasedOf(id));
    await rolloutTick(deps, "w-fixes", 10_000);
    const wave1 = (
      await deps.db
        .select({ nodeId: rolloutNodes.nodeId })
        .from(rolloutNodes)
        .where(and(eq(rolloutNodes.rolloutId, id), eq(rolloutNodes.wave, 1)))
    ).map((r) => r.nodeId);
    expect(wave1).toHaveLength(2);
    expect((await releasedOf(id)).sort()).toEqual(expect.arrayContaining(wave1));
    // One node of wave 1 is revoked (silent for ever), one of wave 2 too (it loses its pin).

    const unreleased = (
      await deps.db
        .select({ nodeId: rolloutNodes.nodeId })
        .from(rolloutNodes)
        .where(and(eq(rolloutNodes.rolloutId, id), eq(rolloutNodes.wave, 2)))
    ).map((r) => r.nodeId);

    await admin().node.revoke({ id: wave1[0]! });
    await admin().node.revoke({ id: unreleased[0]! });
    const { rolePins } = await import("@mesh/db");
    expect(await deps.db.select().from(rolePins).where(eq(rolePins.nodeId, unreleased[0]!))).toEqual([]);
    await report([wave1[1]!]);
    await rolloutTick(deps, "w-fixes", 10_000);
    const [r] = await deps.db.select().from(rollouts).where(eq(rollouts.id, id));
    expect(r!.state).toBe("running");
    expect(r!.currentWave).toBe(2);
    const counts = (await admin().rollout.get({ id })).waveCounts;
    expect(counts.find((c) => c.wave === 1)).toMatchObject({ nodes: 1, applied: 1, pending: 0 });
  });
});
