// The fleet's filters and names (issue 13), through the tRPC API as the dashboard calls it: several
// label conditions, an invalid filter refused with its reason, rename (admin, limited, audited), and
// duplicate hostnames kept apart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createCaller } from "../root";
import { createTrpcContext } from "../trpc";
import { ensureAdminCredentials } from "../auth/credentials";
import { createLoginLimits, loginUser } from "../auth/login-user";
import { SESSION_COOKIE } from "../auth/sessions";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { exportNodesCsv } from "./export-nodes";
import { handleNodesExport } from "../http/nodes-export-handler";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";

describe.each(testEngines())("fleet filters and names on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  let admin: ReturnType<typeof createCaller>;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
    await ensureAdminCredentials(deps.db, { password: "admin-password-1", apiKey: "env-admin-api-key-0123" });
    admin = createCaller(await createTrpcContext({ deps, headers: new Headers({ authorization: "Bearer env-admin-api-key-0123" }), publicUrl: "http://cp" }));
    const enrol = async (key: string, hostname: string, labels: Record<string, string>) => {
      const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels } });
      ids[key] = (
        await enrolNode(deps, {
          token,
          publicKey: testKeyPair().publicKey,
          profile: { ...testProfile(crypto.randomUUID()), hostname },
          inventory: emptyInventory(),
        })
      ).nodeId;
    };
    await enrol("webA", "web-1", { tier: "web", zone: "a" });
    await enrol("webB", "web-2", { tier: "web", zone: "b" });
    await enrol("dbA", "db-1", { tier: "db", zone: "a", backup: "nightly" });
    await enrol("dup", "web-1", { tier: "web" });
  });
  afterAll(() => t?.drop());

  const names = async (input: Parameters<typeof admin.node.list>[0]) => (await admin.node.list(input)).items.map((n) => n.id).sort();

  it("matches every label condition at once: key=value and bare keys", async () => {
    expect(await names({ labels: ["tier=web", "zone=a"] })).toEqual([ids.webA].sort());
    expect(await names({ labels: ["zone=a"] })).toEqual([ids.webA, ids.dbA].sort());
    expect(await names({ labels: ["backup"] })).toEqual([ids.dbA]);
    expect(await names({ labels: ["zone", "tier=web"] })).toEqual([ids.webA, ids.webB].sort());
    expect(await names({ labels: ["tier=nothing"] })).toEqual([]);
    expect((await admin.node.list({ labels: ["tier=web", "zone=a"] })).total).toBe(1);
  });

  it("refuses an invalid filter with its reason, never ignoring it", async () => {
    const bad = { code: "BAD_REQUEST" };
    await expect(admin.node.list({ labels: ["=web"] })).rejects.toMatchObject(bad);
    await expect(admin.node.list({ labels: ["tier=web", "tier=db"] })).rejects.toThrow(/tier.{0,4} is named twice/);
    await expect(admin.node.list({ labels: ["bad key"] })).rejects.toThrow(/a label key/);
    await expect(admin.node.list({ labels: Array.from({ length: 65 }, (_, i) => `k${i}`) })).rejects.toThrow(/at most 64/);
    await expect(admin.node.list({ labels: ["k=" + "v".repeat(400)] })).rejects.toMatchObject(bad);
    await expect(admin.node.list({ health: "sick" as never })).rejects.toMatchObject(bad);
    await expect(admin.node.list({ sort: "publicKey" as never })).rejects.toMatchObject(bad);
  });

  it("renames a node: shown, searched and sorted by its display name, the hostname kept; an empty name gives the hostname back", async () => {
    const renamed = await admin.node.rename({ id: ids.dup!, name: "  web-1 (spare)  " });
    expect(renamed).toMatchObject({ name: "web-1 (spare)", hostname: "web-1", displayName: "web-1 (spare)" });
    const listed = (await admin.node.list({ search: "spare" })).items;
    expect(listed.map((n) => [n.id, n.name, n.hostname])).toEqual([[ids.dup, "web-1 (spare)", "web-1"]]);
    // Still found by its hostname.
    expect((await admin.node.list({ search: "web-1" })).items.map((n) => n.id).sort()).toEqual([ids.webA, ids.dup].sort());
    expect((await admin.node.get({ id: ids.dup! })).name).toBe("web-1 (spare)");
    const events = await admin.event.list({ nodeId: ids.dup!, action: "node.rename" });
    expect(events.items[0]).toMatchObject({ actor: expect.any(String), data: { from: null, to: "web-1 (spare)", hostname: "web-1" } });
    await admin.node.rename({ id: ids.dup!, name: "" });
    expect((await admin.node.get({ id: ids.dup! })).name).toBe("web-1");
  });

  it("refuses a bad name, an unknown node and a viewer", async () => {
    await expect(admin.node.rename({ id: ids.webA!, name: "x".repeat(65) })).rejects.toThrow(/at most 64/);
    await expect(admin.node.rename({ id: ids.webA!, name: "bad\nname" })).rejects.toThrow(/control characters/);
    await expect(admin.node.rename({ id: "not-a-uuid", name: "x" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(admin.node.rename({ id: crypto.randomUUID(), name: "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await admin.user.create({ name: "vera", role: "viewer", password: "viewer-password" });
    const { sessionId } = await loginUser(deps.db, createLoginLimits(), { name: "vera", password: "viewer-password" });
    const viewer = createCaller(await createTrpcContext({ deps, headers: new Headers({ cookie: `${SESSION_COOKIE}=${sessionId}` }), publicUrl: "http://cp" }));
    await expect(viewer.node.rename({ id: ids.webA!, name: "x" })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("exports the current view as CSV: every matching node, page by page, in the view's order", async () => {
    const all = async (filter: Parameters<typeof exportNodesCsv>[1], pageSize?: number) => {
      let text = "";
      for await (const chunk of exportNodesCsv(deps, filter, pageSize)) text += chunk;
      return text.trimEnd().split("\r\n");
    };
    const lines = await all({ labels: ["tier=web"], sort: "name" }, 1);
    expect(lines[0]).toMatch(/^"id","short_id","name","hostname","state","health","labels",/);
    expect(lines).toHaveLength(4);
    expect(
      lines
        .slice(1)
        .map((l) => JSON.parse(l.split(",")[0]!))
        .sort(),
    ).toEqual([ids.webA, ids.webB, ids.dup].sort());
    expect(lines.find((l) => l.startsWith(`"${ids.webA!}"`))).toContain(
      `,"${ids.webA!.slice(0, 8)}","web-1","web-1","disconnected","pending","tier=web, zone=a",`,
    );
    expect(await all({ labels: ["tier=web"] }, 1)).toEqual(await all({ labels: ["tier=web"] }));
  });

  it("exports one snapshot: a node renamed between pages is neither skipped nor written twice", async () => {
    const before = (await admin.node.list({ labels: ["tier=web"], sort: "name" })).items.map((n) => n.id);
    expect(before).toHaveLength(3);
    const lines = exportNodesCsv(deps, { labels: ["tier=web"], sort: "name" }, 1);
    const header = await lines.next();
    const first = await lines.next();
    expect(header.done || first.done).toBe(false);
    // The node on the first page moves to the end of the order, and a node on a later page moves to the front.
    await admin.node.rename({ id: before[0]!, name: "zz-last" });
    await admin.node.rename({ id: before[2]!, name: "aa-first" });
    let text = first.value as string;
    for await (const chunk of lines) text += chunk;
    const exported = text
      .trimEnd()
      .split("\r\n")
      .map((l) => JSON.parse(l.split(",")[0]!) as string);
    expect(exported).toEqual(before);
    await admin.node.rename({ id: before[0]!, name: "" });
    await admin.node.rename({ id: before[2]!, name: "" });
  });

  it("serves the export over HTTP with the fleet page's query, and refuses an invalid filter or no caller", async () => {
    const get = (query: string, headers: Record<string, string> = { authorization: "Bearer env-admin-api-key-0123" }) =>
      handleNodesExport(deps, new Request(`http://cp/api/nodes/export?${query}`, { headers }));
    const ok = await get(`labels=${encodeURIComponent("tier=web, zone=a")}&sort=name`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^text\/csv/);
    expect((await ok.text()).trimEnd().split("\r\n")).toHaveLength(2);
    const bad = await get(`labels=${encodeURIComponent("tier=web, =x")}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/labels: "=x": a label key is missing/);
    expect((await get("health=sick")).status).toBe(400);
    expect((await get("drift=maybe")).status).toBe(400);
    expect((await get("colour=red")).status).toBe(400);
    expect((await get("", {})).status).toBe(401);
  });
});
