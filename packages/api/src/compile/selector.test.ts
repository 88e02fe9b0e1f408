import { describe, expect, it } from "vitest";
import { Selector, type Match } from "@mesh/protocol";
import { matches, matchesSelector } from "./selector";

describe("selector conditions", () => {
  const cases: Array<[string, unknown, Match, boolean]> = [
    ["equals string", "web", "web", true],
    ["equals string, other", "db", "web", false],
    ["equals number on a label", "4", 4, true],
    ["equals number", 4, 4, true],
    ["equals bool", true, true, true],
    ["in", "b", { in: ["a", "b"] }, true],
    ["in, missing", undefined, { in: ["a"] }, false],
    ["notIn", "c", { notIn: ["a", "b"] }, true],
    ["notIn, listed", "a", { notIn: ["a", "b"] }, false],
    ["exists", "", { exists: true }, true],
    ["exists, missing", undefined, { exists: true }, false],
    ["not exists, missing", undefined, { exists: false }, true],
    ["ne", "a", { ne: "b" }, true],
    ["gte", 4, { gte: 4 }, true],
    ["gt", 4, { gt: 4 }, false],
    ["range on a label", "8", { gt: 2, lte: 8 }, true],
    ["range, outside", 16, { gt: 2, lte: 8 }, false],
    ["numeric on text", "many", { gt: 1 }, false],
    ["numeric on empty label", "", { lt: 1 }, false],
  ];
  it.each(cases)("%s", (_name, actual, match, expected) => {
    expect(matches(actual, match)).toBe(expected);
  });

  it("needs every condition of labels and profile", () => {
    const selector = Selector.parse({ labels: { tier: "web", zone: { in: ["a", "b"] } }, profile: { arch: "x86_64", cpus: { gte: 2 } } });
    const node = { labels: { tier: "web", zone: "a" }, profile: { arch: "x86_64", cpus: 2 } };
    expect(matchesSelector(selector, node)).toBe(true);
    expect(matchesSelector(selector, { ...node, profile: { arch: "x86_64", cpus: 1 } })).toBe(false);
    expect(matchesSelector(selector, { ...node, labels: { tier: "web", zone: "c" } })).toBe(false);
    expect(matchesSelector(Selector.parse({}), node)).toBe(true);
  });

  it("refuses an empty numeric condition", () => {
    expect(Selector.safeParse({ profile: { cpus: {} } }).success).toBe(false);
  });
});
