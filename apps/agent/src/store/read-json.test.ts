// The one JSON reader of the host's files: what the schema accepts, else null (never a throw).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore } from "./memory-store";
import { parseJson, readJson } from "./read-json";

const Shape = z.strictObject({ a: z.number() });

describe("parseJson", () => {
  it.each([
    ["accepted JSON", '{"a":1}', { a: 1 }],
    ["bytes", Buffer.from('{"a":2}\n'), { a: 2 }],
    ["truncated JSON", '{"a":', null],
    ["JSON the schema refuses", '{"a":"1"}', null],
    ["an empty file", "", null],
    ["nothing", null, null],
  ])("%s", (_name, raw, expected) => {
    expect(parseJson(raw, Shape)).toEqual(expected);
  });
});

describe("readJson", () => {
  it("reads a key with its schema; a missing or damaged key reads as null", async () => {
    const store = new MemoryStore();
    expect(await readJson(store, "x.json", Shape)).toBeNull();
    await store.write("x.json", '{"a":3}');
    expect(await readJson(store, "x.json", Shape)).toEqual({ a: 3 });
    await store.write("x.json", "garbage");
    expect(await readJson(store, "x.json", Shape)).toBeNull();
  });
});
