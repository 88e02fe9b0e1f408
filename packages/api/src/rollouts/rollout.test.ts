// Staged rollouts (issue 14) against a real database: pins compile old and new versions side by side,
// waves are released in order as reports come in, the canary halts on a failure with the rest untouched,
// soak, timeout, pause/resume/continue, rollback, supersede, two workers, a worker replaced mid-rollout.
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { declarationBodies, declarations, events, nodes, rolePins, rollouts, rolloutNodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { useServiceDeps } from "../testing/service-deps";
// Rows as enrolment writes them: node.get answers with the wire contract's profile and inventory.
import { testReport } from "../testing/host-facts";
import { recordReport } from "../services/record-report";
import { haltsAt, hostRunsDeclaredRelease } from "./advance";
import { rolloutTick } from "./rollout-worker";
import { planWaves } from "./plan-waves";
import { StagedRolloutPolicy } from "@mesh/protocol";
import { insertTestNodes } from "../testing/node-rows";
import { testCaller } from "../testing/test-caller";

const LEASE_MS = 10_000;

describe.each(testEngines())("staged rollouts on %s", (engine) => {
  let deps: Deps;
  let offset = 0;
  useServiceDeps(engine, (d) => (deps = { ...d, now: () => new Date(Date.now() + offset) }));
  const admin = () => testCaller(deps);
  const motd = (content: string) => [{ type: "file" as const, id: "motd", path: "/etc/motd", content }];
  let group = 0;

  /** n enrolled nodes labelled group=<a new group>, the first `linked` of them linked; returns their ids in id order. */
  const makeNodes = async (n: number, linked = 0) => {
    const g = `g${++group}`;
    return { group: g, ids: await insertTestNodes(deps, g, n, linked) };
  };
  const contentOf = async (id: string) => {
    const [row] = await deps.db
      .select({ resources: declarationBodies.resources, roleVersions: declarations.roleVersions, version: declarations.version })
      .from(nodes)
      .innerJoin(declarations, and(eq(declarations.nodeId, nodes.id), eq(declarations.version, nodes.declaredVersion)))
      .innerJoin(declarationBodies, eq(declarationBodies.hash, declarations.hash))
      .where(eq(nodes.id, id));
    const file = (row?.resources as Array<{ id: string; content: string }> | undefined)?.find((r) => r.id === "motd");
    return { content: file?.content ?? null, roleVersions: row?.roleVersions, version: row?.version ?? 0 };
  };
  const contents = async (ids: string[]) => Promise.all(ids.map(async (id) => (await contentOf(id)).content));
  /** Each node reports its current declaration (with an error when it is in `failing`). */
  const report = async (ids: string[], failing: string[] = []) => {
    for (const id of ids) {
      const [n] = await deps.db.select({ v: nodes.declaredVersion }).from(nodes).where(eq(nodes.id, id));
      await recordReport(
        deps,
        id,
        testReport(n!.v, {
          errors: failing.includes(id) ? [{ id: "motd", message: "parent directory missing" }] : [],
          reconciledAt: new Date(Date.now() + Math.random() * 1000).toISOString(),
        }),
      );
    }
  };
  const tick = (owner = "w1") => rolloutTick(deps, owner, LEASE_MS);
  const rolloutOf = async (id: string) => (await deps.db.select().from(rollouts).where(eq(rollouts.id, id)))[0]!;
  const released = async (id: string) =>
    (
      await deps.db
        .select({ nodeId: rolloutNodes.nodeId, wave: rolloutNodes.wave })
        .from(rolloutNodes)
        .where(and(eq(rolloutNodes.rolloutId, id), sql`${rolloutNodes.releasedAt} is not null`))
    )
      .map((r) => r.nodeId)
      .sort();
  const staged = (extra: Partial<StagedRolloutPolicy> = {}) => ({
    mode: "staged" as const,
    canary: { count: 1 },
    waves: { size: 2 },
    waveTimeoutSeconds: 60,
    ...extra,
  });
  /** A role for a new group, saved all at once (v1), then v2 saved with `policy`. */
  const setUp = async (n: number, policy: ReturnType<typeof staged>, linked = 0) => {
    const { group: g, ids } = await makeNodes(n, linked);
    const name = `motd-${g}`;
    const save = (content: string, rollout?: unknown) =>
      admin().role.upsert({ name, selector: { labels: { group: g } }, resources: motd(content), ...(rollout ? { rollout: rollout as never } : {}) });
    await save("one\n");
    const saved = await save("two\n", policy);
    return { name, ids, save, rollout: saved.rollout! };
  };

  it("names on the node page the role version a pinned node compiles: a resource only its old version declares still comes from the role", async () => {
    const { group: g, ids } = await makeNodes(3);
    const name = `rename-${g}`;
    await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: [{ type: "file", id: "old-motd", path: "/etc/motd", content: "one\n" }] });
    // v2 renames the resource; only the canary gets it, the others stay pinned at v1.
    await admin().role.upsert({
      name,
      selector: { labels: { group: g } },
      resources: [{ type: "file", id: "new-motd", path: "/etc/motd", content: "two\n" }],
      rollout: staged(),
    });
    const pinned = await deps.db.select({ nodeId: rolePins.nodeId }).from(rolePins).where(eq(rolePins.roleName, name));
    expect(pinned.length).toBeGreaterThan(0);
    const page = await admin().node.get({ id: pinned[0]!.nodeId });
    expect((page.declaration!.resources as Array<{ id: string }>).map((r) => r.id)).toContain("old-motd");
    expect(page.resourceRoles).toMatchObject({ "old-motd": name });
    expect(ids).toContain(pinned[0]!.nodeId);
  });

  it("compiles pinned nodes at their old version and the rest at the new one, recording the versions", async () => {
    const { name, ids, rollout } = await setUp(5, staged());
    expect(rollout.plan).toMatchObject({ nodes: 5, unchanged: 0, waves: [1, 2, 2], fromVersion: 1, toVersion: 2 });
    const all = await Promise.all(ids.map(contentOf));
    const canary = all.filter((c) => c.content === "two\n");
    expect(canary).toHaveLength(1);
    expect(canary[0]!.roleVersions).toEqual({ [name]: 2 });
    expect(all.filter((c) => c.content === "one\n").map((c) => c.roleVersions)).toEqual(Array(4).fill({ [name]: 1 }));
    expect(await deps.db.select().from(rolePins).where(eq(rolePins.roleName, name))).toHaveLength(4);
    const start = await deps.db
      .select()
      .from(events)
      .where(and(eq(events.action, "rollout.start"), eq(events.target, rollout.id)));
    expect(start).toHaveLength(1);
    expect(start[0]!.data).toMatchObject({ role: name, plan: { nodes: 5, waves: [1, 2, 2] } });
  });

  it("releases the waves in order as reports come in, then completes", async () => {
    const { ids, rollout } = await setUp(5, staged());
    await tick();
    expect((await rolloutOf(rollout.id)).currentWave).toBe(0); // no report yet
    await report(await released(rollout.id));
    await tick();
    expect((await rolloutOf(rollout.id)).currentWave).toBe(1);
    expect(await released(rollout.id)).toHaveLength(3);
    expect((await contents(ids)).filter((c) => c === "two\n")).toHaveLength(3);
    await report(await released(rollout.id));
    await tick();
    expect(await released(rollout.id)).toHaveLength(5);
    await report(ids);
    await tick();
    const done = await rolloutOf(rollout.id);
    expect(done.state).toBe("completed");
    expect(await contents(ids)).toEqual(Array(5).fill("two\n"));
    const detail = await admin().rollout.get({ id: rollout.id });
    expect(detail.waveCounts.map((w) => [w.nodes, w.applied, w.pending])).toEqual([
      [1, 1, 0],
      [2, 2, 0],
      [2, 2, 0],
    ]);
    expect(detail.history.map((h) => h.action)).toEqual(["rollout.start", "rollout.wave", "rollout.wave", "rollout.wave", "rollout.complete"]);
  });

  it("prefers linked nodes for the canary", async () => {
    const { rollout } = await setUp(4, staged(), 1);
    const [canary] = await released(rollout.id);
    const [n] = await deps.db.select({ gw: nodes.gatewayId }).from(nodes).where(eq(nodes.id, canary!));
    expect(n!.gw).toBe("gw");
  });

  it("halts on a canary failure, leaves the rest untouched and alerts", async () => {
    const hook = await admin().alert.create({ name: "ops", url: "http://127.0.0.1:9/hook", events: ["rollout-halted"] });
    const { ids, rollout } = await setUp(5, staged());
    const before = await Promise.all(ids.map(contentOf));
    const canary = await released(rollout.id);
    await report(canary, canary);
    await tick();
    const halted = await rolloutOf(rollout.id);
    expect(halted.state).toBe("halted");
    expect(halted.haltReason).toMatch(/canary: 1 failed/);
    await tick();
    const after = await Promise.all(ids.map(contentOf));
    for (let i = 0; i < ids.length; i++) if (!canary.includes(ids[i]!)) expect(after[i]).toEqual(before[i]);
    expect(await released(rollout.id)).toEqual(canary);
    const { createAlertEvaluator } = await import("../alerts/evaluate-alerts");
    await createAlertEvaluator(deps)();
    const deliveries = await deps.db.execute(sql`select event, body from alert_deliveries where webhook_id = ${hook.id}`);
    const rows = (Array.isArray(deliveries) ? deliveries : (deliveries as { rows: unknown[] }).rows) as Array<{ event: string; body: string }>;
    expect(rows.map((r) => r.event)).toEqual(["rollout-halted"]);
    expect(JSON.parse(rows[0]!.body)).toMatchObject({
      event: "rollout-halted",
      count: 1,
      nodes: [{ id: canary[0], detail: { rollout: rollout.id, wave: 0 } }],
    });
  });

  // Both upgrade paths of decision 0007: the `host` resource (tarball installs) and the host's own package (.deb installs).
  it.each(["host", "package", "package-epoch"] as const)(
    "judges a host upgrade (%s resource) applied only once the node runs the release, not on the report of the binary it replaces",
    async (kind) => {
      const { group: g, ids } = await makeNodes(3);
      await deps.db
        .update(nodes)
        .set({ hostVersion: "1.0.0" })
        .where(sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`);
      const host = (version: string) =>
        kind === "host"
          ? [{ type: "host" as const, id: "mesh-host", version, sha256: version.replace(/\./g, "").padStart(64, "a"), signature: "c2lnbmVk" }]
          : // A Debian version with an epoch and a revision is the host version it packages (1:1.0.1-1 is 1.0.1).
            [{ type: "package" as const, id: "mesh-host", name: "mesh-host", version: kind === "package" ? version : `1:${version}-1` }];
      const save = (version: string, rollout?: unknown) =>
        admin().role.upsert({
          name: `host-${g}`,
          selector: { labels: { group: g } },
          resources: host(version),
          ...(rollout ? { rollout: rollout as never } : {}),
        });
      await save("1.0.0");
      const { rollout } = await save("1.0.1", staged());
      const [canary] = await released(rollout!.id);
      // The old binary put the new one in place and reports the new declaration without errors: not applied yet.
      await report([canary!]);
      await tick();
      expect((await rolloutOf(rollout!.id)).currentWave).toBe(0);
      expect((await admin().rollout.get({ id: rollout!.id })).waveCounts[0]).toMatchObject({ applied: 0, failed: 0, pending: 1 });
      // The new binary links (its version recorded) and reports: applied, the next wave goes.
      await deps.db.update(nodes).set({ hostVersion: "1.0.1" }).where(eq(nodes.id, canary!));
      await report([canary!]);
      await tick();
      expect((await rolloutOf(rollout!.id)).currentWave).toBe(1);
      // Wave 1: one node upgraded; on the other the release failed (the old binary back, reporting it): a halt.
      const [upgraded, failed] = (await released(rollout!.id)).filter((id) => id !== canary);
      await deps.db.update(nodes).set({ hostVersion: "1.0.1" }).where(eq(nodes.id, upgraded!));
      await report([upgraded!, failed!], [failed!]);
      await tick();
      expect((await rolloutOf(rollout!.id)).state).toBe("halted");
      expect((await admin().rollout.get({ id: rollout!.id })).waveCounts[1]).toMatchObject({ applied: 1, failed: 1 });
    },
  );

  it("times out a silent node (counted as failed), and continue goes past the halt", async () => {
    const { ids, rollout } = await setUp(3, staged({ waves: { size: 1 } }));
    await tick();
    offset += 61_000;
    await tick();
    expect((await rolloutOf(rollout.id)).state).toBe("halted");
    expect((await admin().rollout.get({ id: rollout.id })).waveCounts[0]).toMatchObject({ timedOut: 1 });
    await admin().rollout.continue({ id: rollout.id });
    await tick();
    expect(await released(rollout.id)).toHaveLength(2);
    expect((await contents(ids)).filter((c) => c === "two\n")).toHaveLength(2);
  });

  it("waits for the soak before the next wave", async () => {
    const { rollout } = await setUp(3, staged({ soakSeconds: 120 }));
    await report(await released(rollout.id));
    await tick();
    expect((await rolloutOf(rollout.id)).waveDoneAt).not.toBeNull();
    await tick();
    expect(await released(rollout.id)).toHaveLength(1);
    offset += 121_000;
    await tick();
    expect(await released(rollout.id)).toHaveLength(3);
  });

  it("pause holds the next wave, resume releases it", async () => {
    const { rollout } = await setUp(3, staged());
    await admin().rollout.pause({ id: rollout.id });
    await report(await released(rollout.id));
    await tick();
    expect(await released(rollout.id)).toHaveLength(1);
    await expect(admin().rollout.pause({ id: rollout.id })).rejects.toThrow(/paused/);
    await admin().rollout.resume({ id: rollout.id });
    await tick();
    expect(await released(rollout.id)).toHaveLength(3);
    const acts = await deps.db
      .select({ action: events.action, actor: events.actor })
      .from(events)
      .where(and(eq(events.target, rollout.id), sql`${events.action} in ('rollout.pause', 'rollout.resume')`))
      .orderBy(events.id);
    expect(acts).toEqual([
      { action: "rollout.pause", actor: "user:ada" },
      { action: "rollout.resume", actor: "user:ada" },
    ]);
  });

  it("rollback restores the old content to the released nodes only, in the same waves", async () => {
    const { name, ids, rollout } = await setUp(5, staged());
    await report(await released(rollout.id));
    await tick(); // wave 1 released: 3 nodes on "two"
    const reached = await released(rollout.id);
    const untouched = ids.filter((id) => !reached.includes(id));
    const untouchedVersions = await Promise.all(untouched.map(async (id) => (await contentOf(id)).version));
    const back = await admin().rollout.rollback({ id: rollout.id });
    expect((await rolloutOf(rollout.id)).state).toBe("rolled-back");
    expect(back.rollout.plan).toMatchObject({ nodes: 3, waves: [1, 2] });
    // Never released: no pin, same content, no new declaration.
    expect(await Promise.all(untouched.map(async (id) => (await contentOf(id)).version))).toEqual(untouchedVersions);
    expect(
      await deps.db
        .select()
        .from(rolePins)
        .where(and(eq(rolePins.roleName, name), sql`${rolePins.nodeId} in ${untouched}`)),
    ).toEqual([]);
    // The rollback's canary is back on "one"; its wave 1 after reports.
    expect((await contents(reached)).filter((c) => c === "one\n")).toHaveLength(1);
    await report(await released(back.rollout.id));
    await tick();
    await report(await released(back.rollout.id));
    await tick();
    expect((await rolloutOf(back.rollout.id)).state).toBe("completed");
    expect(await contents(ids)).toEqual(Array(5).fill("one\n"));
    expect((await contentOf(ids[0]!)).roleVersions).toEqual({ [name]: 3 });
  });

  it("a new save supersedes a running rollout; nodes not reached keep the version they have", async () => {
    const { ids, rollout, save } = await setUp(4, staged());
    const canary = await released(rollout.id);
    const next = await save("three\n", staged());
    expect((await rolloutOf(rollout.id)).state).toBe("superseded");
    expect((await rolloutOf(rollout.id)).supersededBy).toBe(next.rollout!.id);
    const now = await contents(ids);
    // One node on "three" (the new canary), the old canary still on "two" unless it is the new canary, the rest on "one".
    expect(now.filter((c) => c === "three\n")).toHaveLength(1);
    expect(now.filter((c) => c === "one\n").length + now.filter((c) => c === "two\n").length).toBe(3);
    expect(next.rollout!.plan.nodes).toBe(4);
    void canary;
  });

  it("an all-at-once save ends a running rollout and reaches every node", async () => {
    const { ids, rollout, save } = await setUp(3, staged());
    await save("four\n", { mode: "all-at-once" });
    expect((await rolloutOf(rollout.id)).state).toBe("superseded");
    expect(await contents(ids)).toEqual(Array(3).fill("four\n"));
  });

  it("deleting a role drops its pins", async () => {
    const { name, rollout } = await setUp(3, staged());
    await admin().role.delete({ name });
    expect(await deps.db.select().from(rolePins).where(eq(rolePins.roleName, name))).toEqual([]);
    expect((await rolloutOf(rollout.id)).state).toBe("superseded");
  });

  it("uses the role's stored policy when a save names none", async () => {
    const { group: g, ids } = await makeNodes(3);
    const name = `motd-${g}`;
    await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: motd("one\n"), rolloutPolicy: staged() });
    // The first save reached nodes that had no version of the role: pinned at 0 (the role left out) until released.
    const second = await admin().role.upsert({ name, selector: { labels: { group: g } }, resources: motd("two\n") });
    expect(second.rollout?.plan).toMatchObject({ nodes: 3, waves: [1, 2] });
    void ids;
  });

  it("two workers at once never release a wave twice; a replaced worker's rollout resumes", async () => {
    const { releaseLease } = await import("./lease");
    // The other tests' worker gives the lease up (a clean stop).
    await releaseLease(deps.db, "w1");
    const { ids, rollout } = await setUp(5, staged());
    await report(await released(rollout.id));
    const rolloutCompiles = async () =>
      (
        await deps.db
          .select({ data: events.data })
          .from(events)
          .where(and(eq(events.action, "declaration.compile"), eq(events.actor, "system:rollout")))
      ).length;
    const compilesBefore = await rolloutCompiles();
    const results = await Promise.all([tick("a"), tick("b"), tick("a"), tick("b")]);
    expect(results.filter((r) => r === "held").length).toBeGreaterThan(0);
    expect(results.some((r) => r === "elsewhere")).toBe(true);
    expect(await released(rollout.id)).toHaveLength(3);
    // One release, one compile of its two nodes.
    expect((await rolloutCompiles()) - compilesBefore).toBe(1);
    // Whichever holds the lease stops (gives it up) and "c" resumes the rollout.
    await releaseLease(deps.db, "a");
    await releaseLease(deps.db, "b");
    await report(await released(rollout.id));
    expect(await tick("c")).toBe("held");
    expect(await tick("a")).toBe("elsewhere");
    expect(await released(rollout.id)).toHaveLength(5);
    await releaseLease(deps.db, "c");
    void ids;
  });

  it("releases a wave once when two releases of it race (the rollout row is checked under lock)", async () => {
    const { releaseWave } = await import("./advance");
    const { rollout } = await setUp(5, staged());
    await report(await released(rollout.id));
    await deps.db.update(rollouts).set({ waveDoneAt: new Date() }).where(eq(rollouts.id, rollout.id));
    const steps = await Promise.all([releaseWave(deps, rollout.id, 1, new Date()), releaseWave(deps, rollout.id, 1, new Date())]);
    expect(steps.sort()).toEqual(["not-running", "released"]);
    expect(await released(rollout.id)).toHaveLength(3);
  });

  it("two running workers on one database release every wave once", async () => {
    const { startRolloutWorker } = await import("./rollout-worker");
    const { ids, rollout } = await setUp(7, staged());
    const workers = [
      startRolloutWorker(deps, { intervalMs: 20, leaseMs: 5_000, owner: "x" }),
      startRolloutWorker(deps, { intervalMs: 20, leaseMs: 5_000, owner: "y" }),
    ];
    try {
      for (let i = 0; i < 200 && (await rolloutOf(rollout.id)).state === "running"; i++) {
        await report(await released(rollout.id));
        await new Promise((r) => setTimeout(r, 30));
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    expect((await rolloutOf(rollout.id)).state).toBe("completed");
    expect(await contents(ids)).toEqual(Array(7).fill("two\n"));
    const waves = await deps.db
      .select({ data: events.data })
      .from(events)
      .where(and(eq(events.action, "rollout.wave"), eq(events.target, rollout.id)));
    expect(waves.map((w) => (w.data as { wave: number }).wave).sort()).toEqual([0, 1, 2, 3]);
  });
});

describe("wave planning and the halt rule", () => {
  const policy = (p: Record<string, unknown>) => StagedRolloutPolicy.parse({ mode: "staged", ...p });
  const candidates = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ id: `n${String(i).padStart(3, "0")}`, labels: { zone: i < 3 ? "a" : "b" }, profile: {}, linked: i % 2 === 1 }));
  it("sizes canary and waves by count, percent and selector", () => {
    const sizes = (p: Record<string, unknown>, n = 100) => {
      const { waveOf, waves } = planWaves(candidates(n), policy(p));
      const out = Array(waves).fill(0);
      for (const w of waveOf.values()) out[w]++;
      return out;
    };
    expect(sizes({ canary: { count: 1 }, waves: { percent: 25 } })).toEqual([1, 25, 25, 25, 24]);
    expect(sizes({ canary: { percent: 5 }, waves: { size: 50 } })).toEqual([5, 50, 45]);
    expect(sizes({ canary: { selector: { labels: { zone: "a" } } }, waves: { size: 40 } })).toEqual([3, 40, 40, 17]);
    expect(sizes({ canary: { count: 5 } }, 3)).toEqual([3]);
    const { waveOf } = planWaves(candidates(10), policy({ canary: { count: 2 } }));
    expect([...waveOf].filter(([, w]) => w === 0).map(([id]) => id)).toEqual(["n001", "n003"]);
  });
  it("halts the canary on any failure, a later wave only past the threshold (timed out counts)", () => {
    const p = policy({ haltAtFailurePercent: 10 });
    expect(haltsAt(0, { nodes: 10, failed: 0, timedOut: 1 }, p)).toMatch(/canary/);
    expect(haltsAt(0, { nodes: 10, failed: 0, timedOut: 0 }, p)).toBeNull();
    expect(haltsAt(1, { nodes: 10, failed: 1, timedOut: 0 }, p)).toBeNull();
    expect(haltsAt(1, { nodes: 10, failed: 1, timedOut: 1 }, p)).toMatch(/2 of 10/);
    expect(haltsAt(1, { nodes: 20, failed: 2, timedOut: 0 }, p)).toBeNull();
  });
  it("counts a host release applied once the node runs it: a package version with epoch and revision is the host version; an unversioned package waits for nothing", () => {
    const pkg = (version?: string, state?: string) => ({ type: "package", name: "mesh-host", ...(version ? { version } : {}), ...(state ? { state } : {}) });
    expect(hostRunsDeclaredRelease("1.2.3", [pkg("1:1.2.3-1")])).toBe(true);
    expect(hostRunsDeclaredRelease("1.2.3", [pkg("1.2.3-1")])).toBe(true);
    expect(hostRunsDeclaredRelease("1.2.2", [pkg("1:1.2.3-1")])).toBe(false);
    expect(hostRunsDeclaredRelease(null, [pkg("1.2.3")])).toBe(false);
    // Epoch-aware, by the one Debian contract: a zero epoch is none; what is no Debian version names no release.
    expect(hostRunsDeclaredRelease("1.2.3", [pkg("00:1.2.3-1")])).toBe(true);
    expect(hostRunsDeclaredRelease("1.2.3", [pkg("1.2.3-")])).toBe(false);
    // Installed, any version: an upgrade is not asked for, so nothing to wait for.
    expect(hostRunsDeclaredRelease("1.2.2", [pkg()])).toBe(true);
    expect(hostRunsDeclaredRelease(null, [pkg(undefined, "installed")])).toBe(true);
    expect(hostRunsDeclaredRelease("1.2.2", [pkg("1.2.3", "absent")])).toBe(true);
    // The `host` resource's version is the host version itself.
    expect(hostRunsDeclaredRelease("1.2.3", [{ type: "host", version: "1.2.3" }])).toBe(true);
    expect(hostRunsDeclaredRelease("1.2.3", [{ type: "host", version: "1:1.2.3-1" }])).toBe(false);
    expect(hostRunsDeclaredRelease("1.2.3", [{ type: "host", version: "1.2.3" }, pkg("1.2.4")])).toBe(false);
    expect(hostRunsDeclaredRelease("1.2.3", [])).toBe(true);
  });
});
