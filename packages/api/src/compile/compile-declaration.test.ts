import { describe, expect, it } from "vitest";
import { Role, type RoleInput } from "@mesh/protocol";
import { compileDeclaration, resourceOrigins } from "./compile-declaration";

const role = (r: RoleInput) => Role.parse(r);
const file = (id: string, path: string, content = "x") => ({ type: "file" as const, id, path, content });
const node = { labels: { tier: "web" }, profile: { arch: "x86_64", cpus: 2 } };

describe("compileDeclaration", () => {
  const cases: Array<{ name: string; roles: RoleInput[]; ids: string[]; conflicts?: number }> = [
    { name: "no roles: empty", roles: [], ids: [] },
    { name: "empty selector matches", roles: [{ name: "all", resources: [file("a", "/a")] }], ids: ["a"] },
    { name: "label selector matches", roles: [{ name: "web", selector: { labels: { tier: "web" } }, resources: [file("a", "/a")] }], ids: ["a"] },
    { name: "label selector misses", roles: [{ name: "db", selector: { labels: { tier: "db" } }, resources: [file("a", "/a")] }], ids: [] },
    { name: "profile fact matches", roles: [{ name: "x", selector: { profile: { arch: "x86_64", cpus: 2 } }, resources: [file("a", "/a")] }], ids: ["a"] },
    { name: "profile fact misses", roles: [{ name: "x", selector: { profile: { arch: "aarch64" } }, resources: [file("a", "/a")] }], ids: [] },
    {
      name: "union sorted by path",
      roles: [
        { name: "b", resources: [file("z", "/srv/z")] },
        { name: "a", resources: [{ type: "directory", id: "d", path: "/srv" }, file("y", "/srv/a")] },
      ],
      ids: ["d", "y", "z"],
    },
    {
      name: "same resource twice merges",
      roles: [
        { name: "a", resources: [file("a", "/a")] },
        { name: "b", resources: [file("a", "/a")] },
      ],
      ids: ["a"],
    },
    {
      name: "same id differently conflicts",
      roles: [
        { name: "a", resources: [file("a", "/a", "1")] },
        { name: "b", resources: [file("a", "/a", "2")] },
      ],
      ids: ["a"],
      conflicts: 1,
    },
    {
      name: "same path under two ids conflicts",
      roles: [
        { name: "a", resources: [file("a", "/a")] },
        { name: "b", resources: [file("b", "/a")] },
      ],
      ids: ["a"],
      conflicts: 1,
    },
  ];
  it.each(cases)("$name", ({ roles, ids, conflicts }) => {
    const out = compileDeclaration(node, roles.map(role));
    expect(out.resources.map((r) => r.id)).toEqual(ids);
    expect(out.conflicts).toHaveLength(conflicts ?? 0);
  });

  it("hashes equal content equally whatever the role order", () => {
    const a = role({ name: "a", resources: [file("a", "/a")] });
    const b = role({ name: "b", resources: [file("b", "/b")] });
    expect(compileDeclaration(node, [a, b]).hash).toBe(compileDeclaration(node, [b, a]).hash);
    expect(compileDeclaration(node, [a]).hash).not.toBe(compileDeclaration(node, [a, b]).hash);
  });
});

describe("resourceOrigins", () => {
  it("names the matching roles and the role each resource came from (the first by name when two declare it alike)", () => {
    const roles = [
      role({ name: "web", selector: { labels: { tier: "web" } }, resources: [file("a", "/a"), file("shared", "/s")] }),
      role({ name: "base", resources: [file("b", "/b"), file("shared", "/s")] }),
      role({ name: "db", selector: { labels: { tier: "db" } }, resources: [file("c", "/c")] }),
    ];
    const out = resourceOrigins(node, roles);
    expect(out.roles).toEqual(["base", "web"]);
    expect(out.origin).toMatchObject({ a: "web", b: "base", shared: "base" });
    expect(out.origin.c).toBeUndefined();
  });
});
