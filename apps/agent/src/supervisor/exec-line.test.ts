// Tests for Exec*= lines: what a ':' prefix keeps literal, and how $VAR and ${VAR} expand when the
// command runs, as systemd does.
import { describe, expect, it } from "vitest";
import { expandCommand, parseExecLine } from "./exec-line";

const WEB = { unit: "web.service", name: "web", prefix: "web", instance: "" };

describe("expandCommand", () => {
  const env = { A: "one two  three", B: "b", EMPTY: "", PATHX: "/opt/bin" };
  it.each([
    [
      ["/bin/x", "$A"],
      ["/bin/x", "one", "two", "three"],
    ],
    [
      ["/bin/x", "${A}"],
      ["/bin/x", "one two  three"],
    ],
    [
      ["/bin/x", "--b=${B}", "${B}${B}"],
      ["/bin/x", "--b=b", "bb"],
    ],
    [
      ["/bin/x", "$EMPTY", "$UNSET", "end"],
      ["/bin/x", "end"],
    ],
    [
      ["/bin/x", "${UNSET}", "x${UNSET}y"],
      ["/bin/x", "", "xy"],
    ],
    [
      ["/bin/x", "$$", "$$A", "cost=$$5", "$B-x"],
      ["/bin/x", "$", "$A", "cost=$5", "$B-x"],
    ],
    [
      ["/bin/x", "${PATHX}/tool", "$", "${1}"],
      ["/bin/x", "/opt/bin/tool", "$", "${1}"],
    ],
    [
      ["$B", "a"],
      ["$B", "a"],
    ],
  ])("%j", (argv, expected) => {
    expect(expandCommand({ argv, ignoreFailure: false }, env)).toEqual(expected);
  });

  it("leaves the text of a ':'-prefixed command literal", () => {
    const cmd = parseExecLine(WEB, 1, ":/bin/echo $A ${B} $$");
    expect(expandCommand(cmd, env)).toEqual(["/bin/echo", "$A", "${B}", "$$"]);
  });

  it("does not read inherited object properties as variables", () => {
    expect(expandCommand({ argv: ["/bin/x", "${toString}", "$constructor"], ignoreFailure: false }, {})).toEqual(["/bin/x", ""]);
  });
});
