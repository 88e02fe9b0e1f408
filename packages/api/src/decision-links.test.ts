// Every decision a comment or document points at exists: `docs/decisions/0006-…md` (or its number alone,
// `docs/decisions/0008`) anywhere in the repository's source and docs, and `(0005-….md)` links between
// decisions. A renamed or merged decision leaves no dead pointer behind.
import { describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const DECISIONS = path.join(ROOT, "docs/decisions");
const SKIP = new Set(["node_modules", "dist", "build", "coverage", "out", "drizzle"]);
const TEXT = /\.(ts|tsx|js|mjs|cjs|md|sh|json|ya?ml|txt)$/;

function* textFiles(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* textFiles(full);
    else if (TEXT.test(entry.name)) yield full;
  }
}

/** The decisions a file points at: `decisions/NNNN…` anywhere, and bare `NNNN-….md` links inside docs/decisions. */
export function decisionPointers(text: string, inDecisions: boolean): string[] {
  const found = [...text.matchAll(/decisions\/(\d{4}(?:-[\w-]+(?:\.md)?)?)/g)].map((m) => m[1]!);
  if (inDecisions) found.push(...[...text.matchAll(/\]\((\d{4}-[\w-]+\.md)\)/g)].map((m) => m[1]!));
  return found;
}

describe("decision links", () => {
  it("finds both forms of pointer", () => {
    expect(decisionPointers("see docs/decisions/0006-dashboard.md. and docs/decisions/0008)", false)).toEqual(["0006-dashboard.md", "0008"]);
    expect(decisionPointers("as [0005](0005-node-lifecycle.md) says", true)).toEqual(["0005-node-lifecycle.md"]);
  });

  it("every one resolves to a decision that exists", () => {
    const decisions = fs.readdirSync(DECISIONS);
    const dead: string[] = [];
    for (const file of textFiles(ROOT)) {
      if (file === import.meta.filename) continue; // its own examples
      const inDecisions = path.dirname(file) === DECISIONS;
      for (const pointer of decisionPointers(fs.readFileSync(file, "utf8"), inDecisions)) {
        const ok = /^\d{4}$/.test(pointer)
          ? decisions.some((d) => d.startsWith(`${pointer}-`))
          : decisions.includes(pointer.endsWith(".md") ? pointer : `${pointer}.md`);
        if (!ok) dead.push(`${path.relative(ROOT, file)}: ${pointer}`);
      }
    }
    expect(dead).toEqual([]);
  });
});
