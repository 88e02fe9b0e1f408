// Every save of a role makes a new immutable version (issue 14): numbered from 1, with its author,
// its message and its full content; a role deleted and made again goes on counting.
import { describe, expect, it } from "vitest";
import { asc, eq } from "drizzle-orm";
import { roleVersions, roles } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { useServiceDeps } from "../testing/service-deps";
import { testCaller } from "../testing/test-caller";

describe.each(testEngines())("role versions on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));
  const admin = () => testCaller(deps);
  const motd = (content: string) => [{ type: "file" as const, id: "motd", path: "/etc/motd", content }];

  it("numbers each save, keeps who, why and the full content, and goes on counting after a delete", async () => {
    await admin().role.upsert({ name: "motd", resources: motd("one\n") });
    await admin().role.upsert({ name: "motd", resources: motd("two\n"), message: "  say two  " });
    const versions = await deps.db.select().from(roleVersions).where(eq(roleVersions.roleName, "motd")).orderBy(asc(roleVersions.version));
    expect(versions.map((v) => [v.version, v.actor, v.message, (v.resources as Array<{ content: string }>)[0]!.content])).toEqual([
      [1, "user:ada", null, "one\n"],
      [2, "user:ada", "say two", "two\n"],
    ]);
    const [role] = await deps.db.select({ version: roles.version }).from(roles).where(eq(roles.name, "motd"));
    expect(role!.version).toBe(2);
    expect((await admin().role.list())[0]!.version).toBe(2);
    await admin().role.delete({ name: "motd" });
    await admin().role.upsert({ name: "motd", resources: motd("three\n") });
    expect((await admin().role.list())[0]!.version).toBe(3);
  });

  it("refuses a message longer than 500 characters and saves nothing", async () => {
    const before = (await deps.db.select().from(roleVersions)).length;
    await expect(admin().role.upsert({ name: "other", resources: motd("x"), message: "m".repeat(501) })).rejects.toThrow(/at most 500/);
    expect(await deps.db.select().from(roleVersions)).toHaveLength(before);
  });
});
