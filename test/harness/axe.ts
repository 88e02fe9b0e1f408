// Runs axe-core inside a page (its source injected, no network) and returns the
// violations a user would feel: impact serious or critical.
import { createRequire } from "node:module";
import fs from "node:fs";
import type { Page } from "playwright-core";
import { expect } from "vitest";

const require = createRequire(import.meta.url);
const AXE_SOURCE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

export async function seriousViolations(page: Page): Promise<{ findings: AxeFinding[]; all: number }> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: object,
          ) => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")) }));
  });
  return { findings: violations.filter((v) => v.impact === "serious" || v.impact === "critical"), all: violations.length };
}

/** seriousViolations' findings, one line each ("impact id: help (targets)"), as the tests print and compare them. */
export async function axeFindings(page: Page): Promise<string[]> {
  return (await seriousViolations(page)).findings.map((f) => `${f.impact} ${f.id}: ${f.help} (${f.targets.join(", ")})`);
}

/** The desktop and phone viewports a page is checked at. */
export const DESKTOP_AND_PHONE = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
] as const;

/** Prints the findings of every view checked, then expects none in any. */
export function expectNoAxeFindings(results: Record<string, string[]>) {
  console.log("axe-core serious/critical violations:", JSON.stringify(results, null, 2));
  expect(Object.values(results).flat()).toEqual([]);
}
