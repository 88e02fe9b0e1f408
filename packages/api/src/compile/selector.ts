// Selector matching: pure. A node matches when every condition holds: equals,
// in / notIn, exists, ne, and numeric comparisons (labels compared as numbers).
import type { Match, Selector } from "@mesh/protocol";

export interface NodeFacts {
  labels: Record<string, string>;
  profile: Record<string, unknown>;
}

type Scalar = string | number | boolean;

function sameValue(actual: unknown, expected: Scalar): boolean {
  if (actual === expected) return true;
  // A label is a string: "4" equals 4 when a selector compares it with a number.
  if (typeof actual === "string" && typeof expected === "number") return actual.trim() !== "" && Number(actual) === expected;
  return false;
}

export function matches(actual: unknown, match: Match): boolean {
  if (typeof match !== "object") return sameValue(actual, match);
  if ("exists" in match) return (actual !== undefined && actual !== null) === match.exists;
  if (actual === undefined || actual === null) return false;
  if ("in" in match) return match.in.some((v) => sameValue(actual, v));
  if ("notIn" in match) return !match.notIn.some((v) => sameValue(actual, v));
  if ("ne" in match) return !sameValue(actual, match.ne);
  const n = typeof actual === "number" ? actual : typeof actual === "string" && actual.trim() !== "" ? Number(actual) : NaN;
  if (Number.isNaN(n)) return false;
  return (
    (match.gt === undefined || n > match.gt) &&
    (match.gte === undefined || n >= match.gte) &&
    (match.lt === undefined || n < match.lt) &&
    (match.lte === undefined || n <= match.lte)
  );
}

export function matchesSelector(selector: Selector, node: NodeFacts): boolean {
  for (const [key, match] of Object.entries(selector.labels ?? {})) if (!matches(node.labels[key], match)) return false;
  for (const [key, match] of Object.entries(selector.profile ?? {})) if (!matches(node.profile[key], match)) return false;
  return true;
}
