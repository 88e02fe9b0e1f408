// role.upsert's audit event records what changed (issue 13): selector before/after, resources added,
// removed and changed with their fields, a changed file's content as a capped unified diff, shown
// whole to admins and without content to viewers.
import { describe, expect, it } from "vitest";
import { desc, eq } from "drizzle-orm";
import { events } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { upsertRole } from "./roles";
import { listEvents } from "./list-events";
import { DIFF_BYTES, roleChangeRecord, type RoleChangeRecord } from "./role-change-record";
import { useServiceDeps } from "../testing/service-deps";

describe.each(testEngines())("role diff in the audit trail on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const lastUpsert = async () => (await deps.db.select().from(events).where(eq(events.action, "role.upsert")).orderBy(desc(events.id)).limit(1))[0]!;

  it("records the change itself, not counts", async () => {
    await upsertRole(deps, {
      actor: "user:admin",
      input: {
        name: "site",
        selector: { labels: { tier: "web" } },
        resources: [
          { type: "file", id: "index", path: "/srv/index.html", content: "one\ntwo\nthree\n" },
          { type: "directory", id: "dir", path: "/srv" },
          { type: "file", id: "old", path: "/srv/old", content: "gone\n" },
        ],
      },
    });
    const first = (await lastUpsert()).data as { diff: RoleChangeRecord };
    expect(first.diff.created).toBe(true);
    expect(first.diff.resources.added.items.map((r) => r.id)).toEqual(["index", "dir", "old"]);

    await upsertRole(deps, {
      actor: "user:admin",
      input: {
        name: "site",
        selector: { labels: { tier: "web", zone: "a" } },
        resources: [
          { type: "file", id: "index", path: "/srv/index.html", content: "one\n2\nthree\n", mode: "0600" },
          { type: "directory", id: "dir", path: "/srv" },
          { type: "file", id: "new", path: "/srv/new", content: "x\n" },
        ],
        revokeOfflineAfter: "1d",
      },
    });
    const event = await lastUpsert();
    const { diff, resources } = event.data as { diff: RoleChangeRecord; resources: number };
    expect(resources).toBe(3);
    expect(diff.created).toBeUndefined();
    expect(diff.selector).toEqual({ before: { labels: { tier: "web" } }, after: { labels: { tier: "web", zone: "a" } } });
    expect(diff.revokeOfflineAfter).toEqual({ before: null, after: 1440 });
    expect(diff.resources.added.items).toEqual([{ id: "new", type: "file", subject: "path:/srv/new" }]);
    expect(diff.resources.removed.items).toEqual([{ id: "old", type: "file", subject: "path:/srv/old" }]);
    expect(diff.resources.changed.items).toHaveLength(1);
    const changed = diff.resources.changed.items[0]!;
    expect(changed).toMatchObject({ id: "index", fields: ["content", "mode"] });
    expect(changed.content!.lines).toEqual(["@@ -1,3 +1,3 @@", " one", "-two", "+2", " three"]);
    expect(diff.truncated).toBeUndefined();

    // Viewers read the trail too: the content diff is left out for them, as role.list redacts content.
    const asViewer = (await listEvents(deps, { action: "role.upsert", limit: 1 })).items[0]!.data as { diff: RoleChangeRecord };
    expect(asViewer.diff.resources.changed.items[0]).toEqual({
      id: "index",
      type: "file",
      subject: "path:/srv/index.html",
      fields: ["content", "mode"],
      contentHidden: true,
    });
    const asAdmin = (await listEvents(deps, { action: "role.upsert", limit: 1 }, { showContent: true })).items[0]!.data as { diff: RoleChangeRecord };
    expect(asAdmin.diff.resources.changed.items[0]!.content!.lines).toContain("+2");
  });

  it("caps the content diff at DIFF_BYTES per event, marked truncated", () => {
    const big = (c: string) => Array.from({ length: 200 }, (_, i) => `${c} line ${i} ${"-".repeat(60)}`).join("\n");
    const file = (content: string) => ({
      type: "file" as const,
      id: "big",
      path: "/big",
      content,
      encoding: "utf8" as const,
      mode: "0644",
      onDrift: "correct" as const,
    });
    const before = { selector: {}, resources: [file(big("a"))], grants: [], revokeOfflineAfter: null };
    const diff = roleChangeRecord(before as never, { ...before, resources: [file(big("b"))] } as never);
    const lines = diff.resources.changed.items[0]!.content!.lines;
    expect(lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0)).toBeLessThanOrEqual(DIFF_BYTES);
    expect(diff.resources.changed.items[0]!.content!.omitted).toBeGreaterThan(0);
    expect(diff.truncated).toBe(true);
  });
});
