// The revoke-when-offline policy (issue 13): off by default; a node disconnected past the smallest limit
// of its roles is revoked like a dashboard revoke (grants cut off at the provider), never a linked, a
// never-linked or a claimed node; one audit event per sweep that the "revoked" alerts expand; and two
// control-plane instances sweeping at once revoke and audit once.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { and, eq, inArray, sql } from "drizzle-orm";
import { alertDeliveries, events, grants, nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { listRoles, upsertRole } from "./roles";
import { revokeOfflineNodes } from "./revoke-offline";
import { settleGrants } from "../grants/settle-grants";
import { createSecretBox } from "../secrets/secret-box";
import { memoryGrantProvider } from "../testing/memory-grant-provider";
import { useServiceDeps } from "../testing/service-deps";
import { createWebhook } from "../alerts/webhooks";
import { createAlertEvaluator } from "../alerts/evaluate-alerts";
import { enrolTestNode } from "../testing/test-nodes";

describe.each(testEngines())("revoke-offline policy on %s", (engine) => {
  let deps: Deps;
  const mem = memoryGrantProvider();
  useServiceDeps(engine, (d) => (deps = { ...d, grants: { providers: { postgres: mem.provider }, secrets: createSecretBox(randomBytes(32)) } }));

  const enrol = async (labels: Record<string, string>) => (await enrolTestNode(deps, { labels })).nodeId;
  /** Puts the node in `state`, last seen `minutes` ago (null: never). */
  const offline = (id: string, minutes: number | null, state: "disconnected" | "enrolled" | "pending" = "disconnected") =>
    deps.db
      .update(nodes)
      .set({ state, lastSeenAt: minutes === null ? null : sql`now() - make_interval(mins => ${minutes})` })
      .where(eq(nodes.id, id));
  const stateOf = async (ids: string[]) =>
    Object.fromEntries((await deps.db.select({ id: nodes.id, state: nodes.state }).from(nodes).where(inArray(nodes.id, ids))).map((r) => [r.id, r.state]));
  const policyEvents = () =>
    deps.db
      .select()
      .from(events)
      .where(and(eq(events.action, "node.bulk-revoke"), eq(events.actor, "policy:revoke-offline")));
  const web = (revokeOfflineAfter?: string | number | null) =>
    upsertRole(deps, {
      actor: "test",
      input: {
        name: "web",
        selector: { labels: { tier: "web" } },
        resources: [],
        grants: [{ id: "db", provider: "postgres", path: "/etc/web.env" }],
        revokeOfflineAfter,
      },
    });

  it("revokes only nodes disconnected past the smallest limit of their roles, once, audited, grants cut off at the provider", async () => {
    await web();
    await upsertRole(deps, { actor: "test", input: { name: "db", selector: { labels: { tier: "db" } }, resources: [] } });
    const past = await enrol({ tier: "web" });
    const recent = await enrol({ tier: "web" });
    const noLimit = await enrol({ tier: "db" });
    const linked = await enrol({ tier: "web" });
    const neverLinked = await enrol({ tier: "web" });
    const claim = await enrol({ tier: "web" });
    const twoRoles = await enrol({ tier: "web", fast: "1" });
    await settleGrants(deps);
    await offline(past, 120);
    await offline(recent, 30);
    await offline(noLimit, 60 * 24 * 30);
    await offline(linked, 120, "enrolled");
    await offline(neverLinked, null);
    await offline(claim, 120, "pending");
    await offline(twoRoles, 20);
    const all = [past, recent, noLimit, linked, neverLinked, claim, twoRoles];

    // Off by default: nodes offline for days are left alone.
    expect(await revokeOfflineNodes(deps)).toEqual({ nodes: 0, grantsRevoked: 0 });
    expect(Object.values(await stateOf(all))).not.toContain("revoked");

    await web("1h");
    await upsertRole(deps, { actor: "test", input: { name: "fast", selector: { labels: { fast: "1" } }, resources: [], revokeOfflineAfter: 10 } });
    expect((await listRoles(deps)).map((r) => [r.name, r.revokeOfflineAfter])).toEqual([
      ["db", null],
      ["fast", 10],
      ["web", 60],
    ]);
    const hook = await createWebhook(deps, { actor: "test", input: { name: "ops", url: "http://127.0.0.1:9/hook", events: ["revoked"] } });
    const evaluate = createAlertEvaluator(deps);
    await evaluate();
    const [pastGrant] = await deps.db.select().from(grants).where(eq(grants.nodeId, past));
    expect(mem.held.has(pastGrant!.principal)).toBe(true);

    // Two control-plane instances at once: one sweeps, the other skips or finds nothing left.
    const [one, two] = await Promise.all([revokeOfflineNodes(deps), revokeOfflineNodes(deps)]);
    expect((one?.nodes ?? 0) + (two?.nodes ?? 0)).toBe(2);
    expect(await stateOf(all)).toEqual({
      [past]: "revoked",
      [recent]: "disconnected",
      [noLimit]: "disconnected",
      [linked]: "enrolled",
      [neverLinked]: "disconnected",
      [claim]: "pending",
      [twoRoles]: "revoked",
    });
    const audit = await policyEvents();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.nodeId).toBeNull();
    const data = audit[0]!.data as { nodeIds: string[]; grantsRevoked: number; rules: Array<{ roles: string[]; minutes: number; nodeIds: string[] }> };
    expect([...data.nodeIds].sort()).toEqual([past, twoRoles].sort());
    expect(data.grantsRevoked).toBe(2);
    expect(data.rules).toEqual(
      expect.arrayContaining([
        { roles: ["web"], minutes: 60, nodeIds: [past] },
        { roles: ["fast"], minutes: 10, nodeIds: [twoRoles] },
      ]),
    );

    // The grants are cut off at the provider as a dashboard revoke's are (the settler's part).
    expect(await settleGrants(deps)).toBe(0);
    expect(mem.held.has(pastGrant!.principal)).toBe(false);
    const [recentGrant] = await deps.db.select().from(grants).where(eq(grants.nodeId, recent));
    expect(mem.held.has(recentGrant!.principal)).toBe(true);

    // The alert webhooks' "revoked" event names both nodes.
    await evaluate();
    const deliveries = await deps.db.select().from(alertDeliveries).where(eq(alertDeliveries.webhookId, hook.id));
    expect(deliveries).toHaveLength(1);
    expect((JSON.parse(deliveries[0]!.body) as { nodes: Array<{ id: string }> }).nodes.map((n) => n.id).sort()).toEqual([past, twoRoles].sort());

    // Nothing more to do: a later sweep writes no event.
    expect(await revokeOfflineNodes(deps)).toEqual({ nodes: 0, grantsRevoked: 0 });
    expect(await policyEvents()).toHaveLength(1);
  });

  it("skips while another instance's sweep is recent (once per control plane)", async () => {
    expect(await revokeOfflineNodes(deps)).not.toBeNull();
    expect(await revokeOfflineNodes(deps, { minIntervalMs: 60_000 })).toBeNull();
  });

  it("validates the limit: 5 minutes to 365 days, minutes or a duration", async () => {
    await expect(web(4)).rejects.toThrow(/at least 5 minutes/);
    await expect(web("366d")).rejects.toThrow(/at most 365 days/);
    await expect(web("soon")).rejects.toThrow(/a duration such as/);
    await web("2d");
    expect((await listRoles(deps)).find((r) => r.name === "web")!.revokeOfflineAfter).toBe(2 * 24 * 60);
    await web(null);
    expect((await listRoles(deps)).find((r) => r.name === "web")!.revokeOfflineAfter).toBeNull();
  });
});
