// A role's history through the API (issue 14): versions paged newest first with who and why,
// one version whole (redacted for viewers), the diff between any two, and roll back as a new
// version that recompiles the fleet, also for a deleted role.
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { useServiceDeps } from "../testing/service-deps";
import { enrolWithToken } from "../testing/test-nodes";
import { createToken } from "./tokens";
import { currentDeclaration } from "./declaration-store";
import { testCaller } from "../testing/test-caller";

describe.each(testEngines())("role history on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));
  const caller = (role: "admin" | "viewer", who = "ada") => testCaller(deps, role, `user:${who}`);
  const admin = () => caller("admin");
  // One database for the block: each test has its own role (its name, its file, its nodes' label).
  let name = "";
  const motd = (content: string) => [{ type: "file" as const, id: name, path: `/etc/${name}`, content, mode: "0644" }];
  const save = (content: string, message?: string, selector: { labels: Record<string, string> } = { labels: { tier: name } }) =>
    admin().role.upsert({ name, selector, resources: motd(content), message });
  const fileOf = async (nodeId: string) =>
    ((await currentDeclaration(deps.db, nodeId))!.resources as Array<{ id: string; content?: string }>).find((r) => r.id === name)?.content;
  const enrolled = async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: { tier: name } } });
    return (await enrolWithToken(deps, token)).nodeId;
  };

  it("lists versions newest first, a page at a time, naming who saved each and marking the current one", async () => {
    name = "paged";
    for (let i = 1; i <= 7; i++) await save(`v${i}\n`, i === 3 ? "the third" : undefined);
    await caller("admin", "bob").role.upsert({ name, selector: { labels: { tier: name } }, resources: motd("v8\n") });
    const first = await caller("viewer").role.versions({ name, limit: 3 });
    expect(first).toMatchObject({ exists: true, currentVersion: 8, nextCursor: 6 });
    expect(first.items.map((v) => [v.version, v.actor, v.actorName, v.current, v.resources])).toEqual([
      [8, "user:bob", "bob", true, 1],
      [7, "user:ada", "ada", false, 1],
      [6, "user:ada", "ada", false, 1],
    ]);
    const seen = [...first.items];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await admin().role.versions({ name, limit: 3, cursor });
      seen.push(...page.items);
      cursor = page.nextCursor;
    }
    expect(seen.map((v) => v.version)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect(seen.find((v) => v.version === 3)!.message).toBe("the third");
    expect(seen[0]!.createdAt).toBeInstanceOf(Date);
    await expect(admin().role.versions({ name: "nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(admin().role.versions({ name, limit: 201 })).rejects.toThrow();
    // What a dashboard infinite query sends along: accepted, and changes nothing.
    expect((await admin().role.versions({ name, limit: 3, cursor: 6, direction: "forward" })).items.map((v) => v.version)).toEqual([5, 4, 3]);
  });

  it("gives one version whole to admins and with inline content redacted to viewers", async () => {
    name = "whole";
    await save("secret-one\n", "first");
    await save("secret-two\n");
    const full = await admin().role.version({ name, version: 1 });
    expect(full).toMatchObject({ name, version: 1, message: "first", current: false, selector: { labels: { tier: name } }, grants: [], resourceCount: 1 });
    expect(full.resources[0]).toMatchObject({ content: "secret-one\n" });
    expect(full.source).toMatchObject({ resources: [{ content: "secret-one\n" }] });
    const viewed = await caller("viewer").role.version({ name, version: 1 });
    expect(JSON.stringify(viewed)).not.toContain("secret-one");
    expect(viewed.resources[0]).toMatchObject({ content: expect.stringMatching(/^mesh-redacted:sha256:[0-9a-f]{64}:11$/) });
    expect(viewed).not.toHaveProperty("source");
    await expect(admin().role.version({ name, version: 9 })).rejects.toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("version 9") });
  });

  it("diffs any two versions in either direction, and names a missing one", async () => {
    name = "diffed";
    await save("one\n");
    await save("two\n", undefined, { labels: { tier: "db" } });
    const forward = await admin().role.diff({ name, from: 1, to: 2 });
    expect(forward.selector).toEqual({ before: { labels: { tier: name } }, after: { labels: { tier: "db" } } });
    expect(forward.resources).toMatchObject([{ id: name, action: "update" }]);
    expect(forward.diffs[forward.resources[0]!.diff!]!.lines).toEqual(expect.arrayContaining(["-one", "+two"]));
    const back = await admin().role.diff({ name, from: 2, to: 1 });
    expect(back.selector).toEqual({ before: { labels: { tier: "db" } }, after: { labels: { tier: name } } });
    expect(back.diffs[back.resources[0]!.diff!]!.lines).toEqual(expect.arrayContaining(["-two", "+one"]));
    expect(await admin().role.diff({ name, from: 2, to: 2 })).toEqual({ resources: [], diffs: {} });
    // A viewer sees that the content changed, never the text.
    expect(JSON.stringify(await caller("viewer").role.diff({ name, from: 1, to: 2 }))).not.toMatch(/one|two/);
    await expect(admin().role.diff({ name, from: 1, to: 5 })).rejects.toMatchObject({ code: "NOT_FOUND", message: `role ${name} has no version 5` });
  });

  it("diffs the revoke-offline policy too", async () => {
    name = "revoking";
    await admin().role.upsert({ name, selector: { labels: { tier: name } }, resources: motd("one\n") });
    await admin().role.upsert({ name, selector: { labels: { tier: name } }, resources: motd("one\n"), revokeOfflineAfter: "2h" });
    expect(await admin().role.diff({ name, from: 1, to: 2 })).toEqual({ revokeOfflineAfter: { before: null, after: 120 }, resources: [], diffs: {} });
    expect((await admin().role.diff({ name, from: 2, to: 1 })).revokeOfflineAfter).toEqual({ before: 120, after: null });
  });

  it("rolls back as a new version with the old content and recompiles the nodes", async () => {
    name = "rolled";
    const nodeId = await enrolled();
    await save("old\n", "first");
    await save("new\n");
    expect(await fileOf(nodeId)).toBe("new\n");
    await expect(caller("viewer").role.rollback({ name, version: 1 })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const answer = await admin().role.rollback({ name, version: 1 });
    expect(answer).toMatchObject({ name, rolledBackTo: 1, changed: 1 });
    expect(await fileOf(nodeId)).toBe("old\n");
    const { items } = await admin().role.versions({ name });
    expect(items[0]).toMatchObject({ version: 3, current: true, message: "roll back to v1", actor: "user:ada" });
    expect((await admin().role.version({ name, version: 3 })).resources).toEqual((await admin().role.version({ name, version: 1 })).resources);
    expect(await admin().role.diff({ name, from: 1, to: 3 })).toEqual({ resources: [], diffs: {} });
    await admin().role.rollback({ name, version: 2, message: "new after all" });
    expect((await admin().role.versions({ name, limit: 1 })).items[0]).toMatchObject({ version: 4, message: "new after all" });
    expect(await fileOf(nodeId)).toBe("new\n");
  });

  it("refuses a rollback to a missing version and saves nothing", async () => {
    name = "missing";
    await save("one\n");
    await expect(admin().role.rollback({ name, version: 2 })).rejects.toMatchObject({ code: "NOT_FOUND", message: `role ${name} has no version 2` });
    await expect(admin().role.rollback({ name: "other", version: 1 })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await admin().role.versions({ name })).items.map((v) => v.version)).toEqual([1]);
  });

  it("makes a deleted role again by rolling back to one of its versions", async () => {
    name = "deleted";
    const nodeId = await enrolled();
    await save("kept\n");
    await admin().role.delete({ name });
    expect(await fileOf(nodeId)).toBeUndefined();
    const gone = await admin().role.versions({ name });
    expect(gone).toMatchObject({ exists: false, currentVersion: null, items: [{ version: 1, current: false }] });
    await admin().role.rollback({ name, version: 1 });
    expect((await admin().role.list()).find((r) => r.name === name)?.version).toBe(2);
    expect(await fileOf(nodeId)).toBe("kept\n");
  });
});
