// Conflicts caught before they are saved (issue 13): role.upsert and node.setLabels refuse a
// change that puts nodes into a new conflict, naming it, unless confirmed; nodes already in
// conflict do not block a change that does not make them worse; the check is set-based.
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { events as eventsTable, nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import { Role } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { deleteRole, listRoles, upsertRole } from "./roles";
import { getNode } from "./get-node";
import { setLabels } from "./set-labels";
import { bulkSetLabels } from "./bulk-actions";
import { checkConflicts, checkRoleOnFleet, findNewConflicts } from "./check-conflicts";
import { CompileCache, loadFleet, recompileFleet, withRole } from "./recompile-fleet";
import { lockCompiler } from "./recompile-node";
import { nextRoleVersion } from "./write-role-version";
import { useServiceDeps } from "../testing/service-deps";
import * as compiler from "../compile/compile-declaration";
import { enrolTestNode } from "../testing/test-nodes";
import { testCaller } from "../testing/test-caller";

const file = (id: string, content: string, path = `/etc/${id}`) => ({ type: "file" as const, id, path, content });

describe.each(testEngines())("conflicts at save on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (labels: Record<string, string>, hostname: string) => (await enrolTestNode(deps, { labels, profile: { hostname } })).nodeId;
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MeshError);
    expect((err as MeshError).code).toBe("CONFLICT");
    return err as MeshError;
  };

  it("refuses a role that would put nodes into conflict, naming the resource, the roles, the count and node names; saves nothing", async () => {
    const a = await enrol({ tier: "web" }, "web-a");
    const b = await enrol({ tier: "web" }, "web-b");
    await enrol({ tier: "db" }, "db-a");
    await upsertRole(deps, { actor: "test", input: { name: "motd", resources: [file("motd", "hello\n")] } });
    const before = await getNode(deps, a);
    const err = await refusal(
      upsertRole(deps, { actor: "test", input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("motd", "web\n")] } }),
    );
    expect(err.message).toContain("motd is declared differently by roles motd and web on 2 nodes (web-a, web-b)");
    expect(err.message).toContain("confirmConflicts");
    expect(err.details).toEqual({
      nodes: 2,
      conflicts: [
        {
          key: "motd",
          roles: ["motd", "web"],
          nodes: 2,
          sample: [
            { id: a, name: "web-a" },
            { id: b, name: "web-b" },
          ],
        },
      ],
    });
    // Nothing saved: no role, no conflict on the node, the same declaration.
    expect((await listRoles(deps)).map((r) => r.name)).toEqual(["motd"]);
    const after = await getNode(deps, a);
    expect(after.conflicts).toEqual([]);
    expect(after.declaredVersion).toBe(before.declaredVersion);
  });

  it("names a subject conflict (another id on the same path) and a package declared twice", async () => {
    const err = await refusal(
      upsertRole(deps, {
        actor: "test",
        input: { name: "other", selector: { labels: { tier: "web" } }, resources: [{ ...file("banner", "x\n"), path: "/etc/motd" }] },
      }),
    );
    expect(err.message).toContain("path:/etc/motd is declared differently by roles motd and other on 2 nodes");
  });

  it("saves a conflicting role when confirmed, and records the confirmation in the audit event", async () => {
    const result = await upsertRole(deps, {
      actor: "test",
      confirmConflicts: true,
      input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("motd", "web\n")] },
    });
    expect(result.conflicts.length).toBe(2);
    const node = (await deps.db.select({ conflicts: nodes.conflicts }).from(nodes).where(eq(nodes.name, "web-a")))[0]!;
    expect(node.conflicts).toEqual([{ key: "motd", roles: ["motd", "web"] }]);
    const events = await deps.db.select().from(eventsTable).where(eq(eventsTable.action, "role.upsert"));
    const confirmed = events.find((e) => (e.data as { name: string }).name === "web")!;
    expect((confirmed.data as { confirmedConflicts: unknown }).confirmedConflicts).toEqual({
      nodes: 2,
      conflicts: [{ key: "motd", roles: ["motd", "web"], nodes: 2 }],
    });
  });

  it("does not block a change to nodes already in conflict that adds no conflict; blocks one that makes them worse", async () => {
    // web-a and web-b are in conflict on motd. Editing web's other resources keeps that conflict: allowed.
    await upsertRole(deps, {
      actor: "test",
      input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("motd", "web\n"), file("site", "1")] },
    });
    // A second conflict on those nodes is worse: refused.
    await upsertRole(deps, { actor: "test", input: { name: "site", selector: { labels: { tier: "web" } }, resources: [file("site", "1")] } });
    const err = await refusal(
      upsertRole(deps, { actor: "test", input: { name: "site", selector: { labels: { tier: "web" } }, resources: [file("site", "2")] } }),
    );
    expect(err.message).toContain("site is declared differently by roles site and web on 2 nodes");
    expect(err.message).not.toContain("motd");
    // Resolving the conflict is never refused.
    await upsertRole(deps, { actor: "test", input: { name: "web", selector: { labels: { tier: "web" } }, resources: [file("site", "1")] } });
    expect((await getNode(deps, (await deps.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.name, "web-a")))[0]!.id)).conflicts).toEqual([]);
  });

  it("refuses labels that would select conflicting roles, names them, and saves them when confirmed", async () => {
    const db = (await deps.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.name, "db-a")))[0]!.id;
    // No node has owner=x yet: saving this role conflicts with nothing.
    await upsertRole(deps, { actor: "test", input: { name: "owned", selector: { labels: { owner: "x" } }, resources: [file("site", "9")] } });
    const before = await getNode(deps, db);
    const err = await refusal(setLabels(deps, { actor: "test", input: { id: db, labels: { tier: "web", owner: "x" } } }));
    expect(err.details).toMatchObject({
      nodes: 1,
      conflicts: [
        { key: "site", roles: ["owned", "site"], nodes: 1 },
        { key: "site", roles: ["owned", "web"], nodes: 1 },
      ],
    });
    expect(err.message).toContain("site is declared differently by roles owned and site on 1 node (db-a)");
    expect((await getNode(deps, db)).labels).toEqual(before.labels);
    const saved = await setLabels(deps, { actor: "test", input: { id: db, labels: { tier: "web", owner: "x" }, confirmConflicts: true } });
    expect(saved.conflicts.length).toBeGreaterThan(0);
    // Labels that add no conflict to a conflicted node are not refused.
    await setLabels(deps, { actor: "test", input: { id: db, labels: { tier: "web", owner: "x", extra: "1" } } });
  });

  it("refuses a bulk label change that would select conflicting roles, unless confirmed", async () => {
    const db = await enrol({ tier: "db" }, "db-b");
    const before = await getNode(deps, db);
    const err = await refusal(bulkSetLabels(deps, { actor: "test", input: { ids: [db], set: { tier: "web", owner: "x" } } }));
    expect(err.message).toContain("site is declared differently by roles owned and site on 1 node (db-b)");
    expect((await getNode(deps, db)).labels).toEqual(before.labels);
    const saved = await bulkSetLabels(deps, { actor: "test", input: { ids: [db], set: { tier: "web", owner: "x" }, confirmConflicts: true } });
    expect(saved.conflicts.length).toBeGreaterThan(0);
    // A change that resolves the conflicts is never refused (and leaves the later tests their fleet).
    await bulkSetLabels(deps, { actor: "test", input: { ids: [db], set: { tier: "none" }, remove: ["owner"] } });
  });

  it("checks a bulk label change in one call, and ignores nodes that cannot receive a declaration", async () => {
    const ids = (await deps.db.select({ id: nodes.id, name: nodes.name }).from(nodes).orderBy(nodes.name)).map((n) => n.id);
    const none = await checkConflicts(deps.db, { labels: ids.map((id) => ({ id, labels: {} })) });
    expect(none).toEqual({ nodes: 0, conflicts: [] });
    expect(await checkConflicts(deps.db, { labels: [] })).toEqual({ nodes: 0, conflicts: [] });
    expect(await checkConflicts(deps.db, { labels: [{ id: crypto.randomUUID(), labels: { tier: "web" } }] })).toEqual({ nodes: 0, conflicts: [] });
  });

  it("a role save's check and its compile share one read of the fleet and one compile per distinct set of matched role versions", async () => {
    const cache = ["cache-0", "cache-1", "cache-2", "cache-3"];
    for (const name of cache) await enrol({ tier: "cache", host: name }, name);
    const undo = new Error("rolled back");
    const role = Role.parse({ name: "cache", selector: { labels: { tier: "cache" } }, resources: [file("cache.conf", "1")] });
    const ran = deps.db.transaction(async (tx) => {
      await lockCompiler(tx);
      const fleet = await loadFleet(tx, { selectors: [role.selector] });
      const compiles = new CompileCache();
      const proposed = { ...role, version: await nextRoleVersion(tx, role.name) };
      expect(await checkRoleOnFleet(tx, fleet, proposed, compiles)).toEqual({ nodes: 0, conflicts: [] });
      // Far fewer compiles than nodes: one per distinct set of matched role versions, before and after.
      const checked = compiles.compiles;
      expect(checked).toBeGreaterThan(0);
      expect(checked).toBeLessThan(fleet.nodes.length);
      const result = await recompileFleet(tx, { actor: "test" }, { fleet: { ...fleet, roles: withRole(fleet.roles, proposed) }, compiles });
      expect(result.changed).toBe(cache.length);
      // The compile ran no compile of its own: the check's "after" compiles were exactly its.
      expect(compiles.compiles).toBe(checked);
      throw undo;
    });
    await expect(ran).rejects.toBe(undo);
  });

  it("refuses over the tRPC API with the conflicts in the error data, and accepts confirmConflicts", async () => {
    const caller = testCaller(deps, "admin", "admin");
    const input = { name: "clash", selector: { labels: { tier: "web" } }, resources: [file("site", "3")] };
    const err = await caller.role.upsert(input).then(
      () => null,
      (e: { code?: string; message?: string; cause?: unknown }) => e,
    );
    expect(err?.code).toBe("CONFLICT");
    expect(err?.message).toContain("site is declared differently by roles");
    expect((err!.cause as MeshError).details).toMatchObject({ nodes: 3 });
    await expect(caller.role.upsert({ ...input, confirmConflicts: "yes" } as never)).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.node.setLabels({ id: crypto.randomUUID(), labels: {}, confirmConflicts: 1 } as never)).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const saved = await caller.role.upsert({ ...input, confirmConflicts: true });
    expect(saved.conflicts.length).toBe(3);
    await deleteRole(deps, { actor: "test", name: "clash" });
  });
});

describe("findNewConflicts is set-based", () => {
  it("compiles once per distinct pair of matched role sets, whatever the number of nodes", () => {
    const roles = [
      Role.parse({ name: "a", resources: [file("f", "1")] }),
      Role.parse({ name: "b", selector: { labels: { tier: "web" } }, resources: [file("f", "2")] }),
    ];
    const candidates = Array.from({ length: 10_000 }, (_, i) => {
      const facts = { labels: { tier: i % 2 ? "web" : "db", n: String(i) }, profile: {} };
      return { id: String(i), name: `n${i}`, before: facts, after: facts };
    });
    let compiles = 0;
    const real = compiler.compileDeclaration;
    const counted = (...args: Parameters<typeof real>) => (compiles++, real(...args));
    // Two groups (web, db), a compile before and after for each.
    const result = findNewConflicts(candidates, [roles[0]!], roles, counted);
    expect(result.nodes).toBe(5_000);
    expect(result.conflicts).toEqual([{ key: "f", roles: ["a", "b"], nodes: 5_000, sample: expect.any(Array) }]);
    expect(result.conflicts[0]!.sample).toHaveLength(5);
    expect(compiles).toBe(4);
  });
});
