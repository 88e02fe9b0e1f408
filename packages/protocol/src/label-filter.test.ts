import { describe, expect, it } from "vitest";
import { parseLabelFilter } from "./label-filter";

describe("parseLabelFilter", () => {
  it("reads the label editor's format, bare keys and spaces around '='", () => {
    expect(parseLabelFilter("tier=web, zone=a")).toEqual({ conditions: ["tier=web", "zone=a"] });
    expect(parseLabelFilter("tier = web\nbackup")).toEqual({ conditions: ["tier=web", "backup"] });
    expect(parseLabelFilter(" , ")).toEqual({ conditions: [] });
    expect(parseLabelFilter("url=a=b")).toEqual({ conditions: ["url=a=b"] });
  });

  it("says why a filter is invalid", () => {
    expect(parseLabelFilter("=web")).toEqual({ error: '"=web": a label key is missing' });
    expect(parseLabelFilter("tier=web, tier=db")).toEqual({ error: '"tier" is named twice' });
    expect(parseLabelFilter("bad key=x")).toMatchObject({ error: expect.stringMatching(/^"bad key=x": a label key/) });
    expect(parseLabelFilter(Array.from({ length: 65 }, (_, i) => `k${i}`).join(","))).toMatchObject({ error: expect.stringMatching(/at most 64/) });
    expect(parseLabelFilter(`k=${"v".repeat(400)}`)).toMatchObject({ error: expect.any(String) });
  });
});
