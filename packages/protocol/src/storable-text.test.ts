import { describe, expect, it } from "vitest";
import { HostFrame } from "./frames";
import { describeUnstorableText, findUnstorableText } from "./storable-text";

describe("text Postgres cannot store", () => {
  it.each([
    ["a NUL in a nested value", { labels: { tier: "w\u0000b" } }, "labels.tier"],
    ["a NUL in an array", { resources: [{ id: "ok" }, { id: "x\u0000" }] }, "resources.1.id"],
    ["a NUL in a key", { labels: { "a\u0000": "b" } }, "labels.a\\0"],
    ["a lone surrogate", { name: "a\ud800" }, "name"],
    ["the value itself", "\u0000", "(root)"],
  ])("finds %s and names the field", (_name, value, path) => {
    expect(findUnstorableText(value)?.path).toBe(path);
  });

  it("passes ordinary text, emoji included, and deep nesting without a stack overflow", () => {
    expect(findUnstorableText({ a: ["😀", 1, null, { b: "c" }] })).toBeNull();
    let deep: unknown = "x";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findUnstorableText(deep)).toBeNull();
  });

  it("refuses a host frame holding a NUL, naming the field", () => {
    const r = HostFrame.safeParse({ type: "error", code: "x", message: "a\u0000b" });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(["message"]);
    expect(describeUnstorableText(findUnstorableText({ message: "a\u0000" })!)).toMatch(/^message: contains a NUL/);
  });
});
