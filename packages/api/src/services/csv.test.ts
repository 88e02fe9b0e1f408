import { describe, expect, it } from "vitest";
import { csvCell, csvLine } from "./csv";

describe("csvCell", () => {
  it("quotes every cell and doubles quotes inside", () => {
    expect(csvCell("plain")).toBe('"plain"');
    expect(csvCell('say "hi", then\r\nmore')).toBe('"say ""hi"", then\r\nmore"');
    expect(csvCell("")).toBe('""');
  });

  it.each(["=cmd()", "+1+2", "-2+3", "@SUM(A1)", "\t=1", "\r=1"])("defuses a cell a spreadsheet would run: %j", (value) => {
    expect(csvCell(value)).toBe(`"'${value}"`);
  });

  it("writes null as empty, a date as ISO, an object as JSON, a number as itself", () => {
    expect(csvCell(null)).toBe('""');
    expect(csvCell(undefined)).toBe('""');
    expect(csvCell(new Date("2026-01-02T03:04:05.000Z"))).toBe('"2026-01-02T03:04:05.000Z"');
    expect(csvCell({ a: '="x"' })).toBe('"{""a"":""=\\""x\\""""}"');
    expect(csvCell(42)).toBe('"42"');
    expect(csvCell(true)).toBe('"true"');
  });

  it("joins a line with commas and ends it with CRLF", () => {
    expect(csvLine(["a", 1, null])).toBe('"a","1",""\r\n');
  });
});
