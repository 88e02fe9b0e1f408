// docs/api.md is what the generator makes from the router now: regenerated in memory and compared,
// so a procedure, a schema or a guard that changes without `npm run docs:api -w @mesh/api` fails here.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { listProcedures, renderApiReference } from "./render-api-reference";
import { compactJson } from "./compact-json";

const REFERENCE = new URL("../../../../docs/api.md", import.meta.url);

describe("the API reference", () => {
  it("is up to date with the router (run `npm run docs:api -w @mesh/api` after changing a procedure)", () => {
    expect(readFileSync(REFERENCE, "utf8") === renderApiReference(), "docs/api.md is stale: run `npm run docs:api -w @mesh/api`").toBe(true);
  });

  it("lists every procedure with an output schema and a description, so what scripts read is checked and documented", () => {
    const procedures = listProcedures();
    expect(procedures.length).toBeGreaterThan(50);
    expect(procedures.filter((p) => !p.output).map((p) => p.path)).toEqual([]);
    expect(procedures.filter((p) => !p.description).map((p) => p.path)).toEqual([]);
  });

  it("says who may call each procedure from the guard it was built on", () => {
    const access = Object.fromEntries(listProcedures().map((p) => [p.path, p.access]));
    expect(access).toMatchObject({
      "node.list": "viewer",
      "node.get": "viewer",
      "token.create": "admin",
      "role.upsert": "admin",
      "user.me": "viewer",
      "user.list": "admin",
    });
    expect(Object.values(access)).not.toContain("public");
  });

  it("shows a time as an ISO 8601 string, the form plain JSON sends it in", () => {
    expect(renderApiReference()).toContain('"createdAt": { "type": "string", "format": "date-time" }');
  });
});

describe("compactJson", () => {
  it("keeps what fits on one line and breaks the rest one member per line", () => {
    expect(compactJson({ a: 1, b: [1, 2] })).toBe('{ "a": 1, "b": [1, 2] }');
    const long = { key: "x".repeat(120), list: [] };
    expect(compactJson(long)).toBe(`{\n  "key": "${"x".repeat(120)}",\n  "list": []\n}`);
    expect(JSON.parse(compactJson({ deep: { deeper: Array.from({ length: 40 }, (_, i) => i) } }))).toEqual({
      deep: { deeper: Array.from({ length: 40 }, (_, i) => i) },
    });
  });
});
