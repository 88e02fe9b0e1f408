// A role keeps its author's key order (issue 13): role.upsert stores the body as sent
// (roles.source, json), and role.list gives it back to admins only.
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { useServiceDeps } from "../testing/service-deps";
import { upsertRole } from "./roles";
import { testCaller } from "../testing/test-caller";

describe.each(testEngines())("role source on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));
  const caller = (role: "admin" | "viewer") => testCaller(deps, role, "someone");

  it("gives an admin the role as written: key order kept, no defaults added; a viewer gets none", async () => {
    const resources = [{ path: "/etc/motd", content: "hi\n", type: "file", id: "motd" }];
    await caller("admin").role.upsert({ name: "motd", selector: { labels: { zone: "a", tier: "web" } }, resources } as never);
    const [listed] = await caller("admin").role.list();
    expect(JSON.stringify(listed!.source)).toBe(JSON.stringify({ selector: { labels: { zone: "a", tier: "web" } }, resources }));
    // The stored role is the parsed one, defaults and all.
    expect(listed!.resources[0]).toMatchObject({ onDrift: "correct", mode: "0644" });
    const [seen] = await caller("viewer").role.list();
    expect(seen).not.toHaveProperty("source");
  });

  it("forgets the source when a role is saved without one (a service call)", async () => {
    await upsertRole(deps, { actor: "test", input: { name: "motd", resources: [{ type: "file", id: "motd", path: "/etc/motd", content: "x" }] } });
    const [listed] = await caller("admin").role.list();
    expect(listed!.source).toBeNull();
  });
});
