// Bad flags said in words: the nearest option, only when it is near; a command's usage lines.
import { describe, expect, it } from "vitest";
import { commandUsage, editDistance, suggestOption } from "./usage-hint";

describe("usage hints", () => {
  it("suggests the option meant, and nothing for one far from every option", () => {
    const known = ["token", "token-file", "force", "ca-pin", "insecure", "state-dir", "root", "interval", "json"];
    expect(suggestOption("tokn", known)).toBe("token");
    expect(suggestOption("insecur", known)).toBe("insecure");
    expect(suggestOption("statedir", known)).toBe("state-dir");
    expect(suggestOption("capin", known)).toBe("ca-pin");
    expect(suggestOption("frobnicate", known)).toBeNull();
    expect(suggestOption("x", known)).toBeNull();
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  it("takes a command's synopsis and its continuation lines from the usage", () => {
    const usage = "commands:\n  enrol URL --token T\n                                  enrol this machine\n  run                             the daemon\n";
    expect(commandUsage(usage, "enrol")).toBe("  enrol URL --token T\n                                  enrol this machine");
    expect(commandUsage(usage, "run")).toBe("  run                             the daemon");
    expect(commandUsage(usage, "nope")).toBeNull();
  });
});
