// The architecture rules in biome.jsonc still refuse what they exist to refuse: each import below is
// written into a scratch tree laid out like the repository and linted with the repository's own config.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../harness/paths";

const BIOME = path.join(REPO, "node_modules/.bin/biome");

/** [file in the tree, import specifier]: every one must be refused by noRestrictedImports. */
const REFUSED: [string, string][] = [
  ["apps/agent/src/probe.ts", "@mesh/db"],
  ["apps/agent/src/probe.ts", "@mesh/api"],
  ["apps/agent/src/probe.ts", "@mesh/api/gateway"],
  ["apps/agent/src/probe.ts", "@mesh/web"],
  ["apps/agent/src/probe.ts", "../../../packages/db/src/index"],
  ["apps/agent/src/probe.ts", "next"],
  ["apps/agent/src/probe.ts", "next/server"],
  ["apps/agent/src/probe.ts", "@trpc/server"],
  ["apps/agent/src/probe.ts", "drizzle-orm"],
  ["packages/protocol/src/probe.ts", "node:fs"],
  ["packages/protocol/src/probe.ts", "fs"],
  ["packages/protocol/src/probe.ts", "pino"],
  ["packages/protocol/src/probe.ts", "@mesh/db"],
  ["packages/protocol/src/probe.ts", "../../db/src/index"],
  ["packages/protocol/src/probe.ts", "vitest"],
  ["packages/protocol/src/probe.test.ts", "@mesh/db"],
  ["packages/db/src/probe.ts", "@mesh/api"],
  ["packages/db/src/probe.ts", "../../api/src/errors"],
  ["packages/db/src/probe.ts", "@mesh/agent/src/log"],
  ["packages/api/src/probe.ts", "@mesh/web"],
  ["packages/api/src/probe.ts", "@mesh/agent/src/log"],
  ["packages/api/src/probe.ts", "../../../apps/web/src/server"],
  ["apps/web/src/probe.ts", "@mesh/agent/src/log"],
  ["apps/web/src/probe.ts", "../../agent/src/log"],
];

/** Imports each layer makes today: none may be refused. */
const ALLOWED: [string, string][] = [
  ["apps/agent/src/allowed.ts", "@mesh/protocol"],
  ["apps/agent/src/allowed.ts", "node:crypto"],
  ["apps/agent/src/allowed.ts", "pino"],
  ["apps/agent/src/allowed.ts", "ws"],
  ["apps/agent/src/allowed.ts", "./log"],
  ["packages/protocol/src/allowed.ts", "zod"],
  ["packages/protocol/src/allowed.ts", "./limits"],
  ["packages/protocol/src/allowed.test.ts", "vitest"],
  ["packages/db/src/allowed.ts", "drizzle-orm/pg-core"],
  ["packages/db/src/allowed.ts", "@electric-sql/pglite"],
  ["packages/api/src/allowed.ts", "@mesh/db"],
  ["packages/api/src/allowed.ts", "@mesh/protocol"],
  ["packages/api/src/allowed.ts", "@trpc/server"],
  ["apps/web/src/allowed.ts", "@mesh/api"],
  ["apps/web/src/allowed.ts", "@mesh/db"],
  ["apps/web/src/allowed.ts", "next/server"],
];

interface Finding {
  rule: string;
  file: string;
  line: number;
}

/** Runs biome lint over `dir` with the repository's config; its GitHub reporter gives one line per finding. */
function lint(dir: string): Finding[] {
  const r = spawnSync(BIOME, ["lint", "--vcs-enabled=false", "--reporter=github", "--max-diagnostics=none", "."], { cwd: dir, encoding: "utf8" });
  if (r.error) throw r.error;
  const findings: Finding[] = [];
  for (const m of r.stdout.matchAll(/^::(?:error|warning) title=([^,]+),file=([^,]+),line=(\d+),/gm)) {
    findings.push({ rule: m[1]!, file: path.relative(dir, m[2]!), line: Number(m[3]) });
  }
  return findings;
}

describe("layering and cycle rules (biome.jsonc)", () => {
  let dir: string;
  let findings: Finding[];
  /** Line numbers of each probe file's imports, in the order written. */
  const lines = new Map<string, string[]>();

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-layering-"));
    fs.copyFileSync(path.join(REPO, "biome.jsonc"), path.join(dir, "biome.jsonc"));
    for (const [file, spec] of [...REFUSED, ...ALLOWED]) lines.set(file, [...(lines.get(file) ?? []), spec]);
    for (const [file, specs] of lines) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      const body = specs.map((s, i) => `import * as m${i} from "${s}";`).join("\n");
      fs.writeFileSync(path.join(dir, file), `${body}\nexport const all = [${specs.map((_, i) => `m${i}`).join(", ")}];\n`);
    }
    // A runtime cycle, and a cycle through a type-only import (erased, so allowed).
    fs.writeFileSync(path.join(dir, "packages/api/src/cycle-a.ts"), 'import { b } from "./cycle-b";\nexport const a = () => b;\n');
    fs.writeFileSync(path.join(dir, "packages/api/src/cycle-b.ts"), 'import { a } from "./cycle-a";\nexport const b = () => a;\n');
    fs.writeFileSync(path.join(dir, "packages/api/src/types-a.ts"), 'import type { B } from "./types-b";\nexport interface A { b?: B }\n');
    fs.writeFileSync(path.join(dir, "packages/api/src/types-b.ts"), 'import type { A } from "./types-a";\nexport interface B { a?: A }\n');
    // A lazy import() is an import too.
    fs.writeFileSync(path.join(dir, "apps/agent/src/lazy.ts"), 'export const lazy = () => import("@mesh/api");\n');
    findings = lint(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const refusedAt = (file: string, spec: string) => {
    const line = lines.get(file)!.indexOf(spec) + 1;
    return findings.some((f) => f.rule === "lint/style/noRestrictedImports" && f.file === file && f.line === line);
  };

  it.each(REFUSED)("%s may not import %s", (file, spec) => {
    expect(refusedAt(file, spec)).toBe(true);
  });

  it.each(ALLOWED)("%s may import %s", (file, spec) => {
    expect(refusedAt(file, spec)).toBe(false);
  });

  it("refuses a lazy import() across a layer as well", () => {
    expect(findings.some((f) => f.rule === "lint/style/noRestrictedImports" && f.file === "apps/agent/src/lazy.ts")).toBe(true);
  });

  it("refuses a runtime import cycle, and lets a cycle of type-only imports be", () => {
    const cycles = findings.filter((f) => f.rule === "lint/suspicious/noImportCycles").map((f) => f.file);
    expect(cycles.sort()).toEqual(["packages/api/src/cycle-a.ts", "packages/api/src/cycle-b.ts"]);
  });

  it("finds nothing else in the probe files", () => {
    expect(findings.filter((f) => !/noRestrictedImports|noImportCycles/.test(f.rule))).toEqual([]);
  });
});
