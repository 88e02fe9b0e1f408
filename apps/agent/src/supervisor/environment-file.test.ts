// Tests for EnvironmentFile= parsing: comments, quotes, escapes, continuations, and the lines
// systemd skips.
import { describe, expect, it } from "vitest";
import { parseEnvironmentFile } from "./environment-file";

describe("parseEnvironmentFile", () => {
  it.each([
    ["A=1\nB=2", { A: "1", B: "2" }],
    ["# comment\n; other comment\n\n  A = spaced  \n", { A: "spaced" }],
    ["A=\"double quoted\"\nB='single # quoted'", { A: "double quoted", B: "single # quoted" }],
    ['A="esc \\" \\\\ \\$ \\n"', { A: 'esc " \\ $ \\n' }],
    ["A='no \\escapes'", { A: "no \\escapes" }],
    ['A="multi\nline"\nB=2', { A: "multi\nline", B: "2" }],
    ["A=one \\\ntwo", { A: "one two" }],
    ["A=x\\ y\\#", { A: "x y#" }],
    ['A=" padded "  ', { A: " padded " }],
    ["A=1 # not a comment", { A: "1 # not a comment" }],
    ["A=\nB=", { A: "", B: "" }],
    ["A=1\r\nB=2\r\n", { A: "1", B: "2" }],
    ["A=1\nA=2", { A: "2" }],
    ["export A=1\nB=2", { B: "2" }],
    ["no equals here\n1BAD=x\nGOOD=y", { GOOD: "y" }],
    ['A=mixed"quo ted"end', { A: "mixedquo tedend" }],
    ['A="unterminated\nB=2', {}],
    ["", {}],
  ])("%j", (text, expected) => {
    expect(parseEnvironmentFile(text)).toEqual(expected);
  });
});
