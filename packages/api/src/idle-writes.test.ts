// An idle control plane writes nothing (issue 11: ≤ 1 write/s idle, the gateway's heartbeat being the one
// steady write): each periodic worker's tick, with nothing to do, neither writes nor locks a row. A row
// lock marks the row (its xmax) just as an update makes a new version (its xmin): both are compared.
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { nodes, rolloutLease, rowsOf } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "./deps";
import { useServiceDeps } from "./testing/service-deps";
import { rolloutTick } from "./rollouts/rollout-worker";
import { createAlertEvaluator } from "./alerts/evaluate-alerts";
import { createWebhook, setWebhookEnabled } from "./alerts/webhooks";
import { revokeOfflineNodes, REVOKE_OFFLINE_LEASE } from "./services/revoke-offline";
import { upsertRole } from "./services/roles";
import { insertTestNodes } from "./testing/node-rows";

describe.each(testEngines())("an idle control plane writes nothing on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  /** A row's version and lock marks: they change when the row is updated or locked. */
  const marks = async (table: "alert_cursor" | "sweep_leases" | "rollout_lease", where: string) =>
    rowsOf<{ xmin: string; xmax: string }>(await deps.db.execute(sql.raw(`select xmin::text as xmin, xmax::text as xmax from ${table} where ${where}`)))[0];
  const cursor = async () =>
    rowsOf<{ event_id: string | number; evaluated_at: string | Date }>(
      await deps.db.execute(sql`select event_id, evaluated_at from alert_cursor where id = 1`),
    )[0]!;

  it("a rollout tick with no rollout running takes no lease; the lease is taken only while one runs", async () => {
    expect(await rolloutTick(deps, "w1", 10_000)).toBe("idle");
    expect(await rolloutTick(deps, "w1", 10_000)).toBe("idle");
    expect(await deps.db.select().from(rolloutLease)).toEqual([]);

    await insertTestNodes(deps, "idle", 3);
    const role = (content: string) => ({
      name: "idle-motd",
      selector: { labels: { group: "idle" } },
      resources: [{ type: "file" as const, id: "motd", path: "/etc/motd", content }],
    });
    await upsertRole(deps, { actor: "test", input: role("one\n") });
    const staged = await upsertRole(deps, {
      actor: "test",
      input: role("two\n"),
      rollout: { mode: "staged", canary: { count: 1 }, waves: { size: 2 }, waveTimeoutSeconds: 600 },
    });
    expect(staged.rollout?.plan).toMatchObject({ nodes: 3 });
    expect(await rolloutTick(deps, "w1", 10_000)).toBe("held");
    expect(await rolloutTick(deps, "w2", 10_000)).toBe("elsewhere");
    const held = await marks("rollout_lease", "true");
    expect(held).toBeDefined();

    // An all-at-once save supersedes the rollout: nothing runs, the lease is left to run out untouched.
    await upsertRole(deps, { actor: "test", input: role("three\n") });
    expect(await rolloutTick(deps, "w1", 10_000)).toBe("idle");
    expect(await rolloutTick(deps, "w2", 10_000)).toBe("idle");
    expect(await marks("rollout_lease", "true")).toEqual(held);
  });

  it("the alert evaluator with no event to read and no webhook watching a window neither locks nor writes its cursor", async () => {
    const evaluate = createAlertEvaluator(deps);
    // The events written so far are read once (a write), then nothing is left.
    await evaluate();
    const before = await marks("alert_cursor", "id = 1");
    for (let i = 0; i < 3; i++) expect(await evaluate()).toEqual({ deliveries: 0 });
    expect(await marks("alert_cursor", "id = 1")).toEqual(before);

    // A webhook on audit events only: its creation is an event (read: a write), then idle again.
    await createWebhook(deps, { actor: "test", input: { name: "ops", url: "http://127.0.0.1:9/hook", events: ["enrolled"] } });
    const from = Number((await cursor()).event_id);
    await evaluate();
    expect(Number((await cursor()).event_id)).toBeGreaterThan(from);
    const after = await marks("alert_cursor", "id = 1");
    expect(await evaluate()).toEqual({ deliveries: 0 });
    expect(await marks("alert_cursor", "id = 1")).toEqual(after);
  });

  it("a webhook that starts watching offline nodes gets windows from its creation, not from where an idle evaluator left the cursor", async () => {
    const evaluate = createAlertEvaluator(deps);
    // Idle for a day: the cursor's time was not moved meanwhile. A node went offline 2 hours ago.
    await deps.db.execute(sql`update alert_cursor set evaluated_at = now() - interval '1 day' where id = 1`);
    const [gone] = await insertTestNodes(deps, "offline", 1);
    await deps.db.update(nodes).set({ state: "disconnected", lastSeenAt: sql`now() - interval '2 hours'` }).where(sql`${nodes.id} = ${gone!}`);
    const hook = await createWebhook(deps, {
      actor: "test",
      input: { name: "offline", url: "http://127.0.0.1:9/hook", events: ["offline"], offlineMinutes: 60 },
    });
    // Its 60 minutes were crossed an hour before it existed: no alert for it.
    expect(await evaluate()).toEqual({ deliveries: 0 });
    // The positive control: a node that crosses its 60 minutes after the webhook exists is delivered.
    const [crossing] = await insertTestNodes(deps, "crossing", 1);
    await deps.db
      .update(nodes)
      .set({ state: "disconnected", lastSeenAt: sql`now() - interval '60 minutes' + interval '1 second'` })
      .where(sql`${nodes.id} = ${crossing!}`);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await evaluate()).toEqual({ deliveries: 1 });
    // Watching a window, the evaluator moves the cursor's time every run (it judges (evaluated_at, now]).
    const watching = await marks("alert_cursor", "id = 1");
    await evaluate();
    expect(await marks("alert_cursor", "id = 1")).not.toEqual(watching);

    // Disabled (nothing watches a window), idle for a day again, then enabled: the window restarts too.
    await setWebhookEnabled(deps, { actor: "test", id: hook.id, enabled: false });
    await evaluate();
    await deps.db.execute(sql`update alert_cursor set evaluated_at = now() - interval '1 day' where id = 1`);
    await setWebhookEnabled(deps, { actor: "test", id: hook.id, enabled: true });
    expect(await evaluate()).toEqual({ deliveries: 0 });
  });

  it("the revoke-offline sweep with no role using the policy, or not due, neither locks nor stamps its lease row", async () => {
    const lease = `name = '${REVOKE_OFFLINE_LEASE}'`;
    const before = await marks("sweep_leases", lease);
    expect(before).toBeDefined();
    for (let i = 0; i < 3; i++) expect(await revokeOfflineNodes(deps, { minIntervalMs: 0 })).toEqual({ nodes: 0, grantsRevoked: 0 });
    expect(await marks("sweep_leases", lease)).toEqual(before);

    // With a policy the sweep runs (and stamps its row); a sweep within the interval after it touches nothing.
    await upsertRole(deps, { actor: "test", input: { name: "strict", selector: { labels: { group: "none" } }, resources: [], revokeOfflineAfter: 10 } });
    expect(await revokeOfflineNodes(deps)).toEqual({ nodes: 0, grantsRevoked: 0 });
    const stamped = await marks("sweep_leases", lease);
    expect(stamped).not.toEqual(before);
    for (let i = 0; i < 3; i++) expect(await revokeOfflineNodes(deps, { minIntervalMs: 60_000 })).toBeNull();
    expect(await marks("sweep_leases", lease)).toEqual(stamped);
  });
});
