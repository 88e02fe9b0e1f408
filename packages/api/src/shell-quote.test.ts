import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellCommand, shellQuote } from "./shell-quote";

// What sh makes of `v=<quoted>; printf %s "$v"`: the quoting is right when that is the value itself.
const throughSh = (value: string) => execFileSync("sh", ["-c", `v=${shellQuote(value)}; printf %s "$v"`], { encoding: "utf8" });

describe("shellQuote", () => {
  it.each(["http://127.0.0.1:3000", "it's", `"; touch /tmp/pwned; echo "`, "$(id) `id` ${HOME} \\ * ? [a] ~ # ; & | < > ! \n newline", "", "'''"])(
    "survives sh unchanged: %j",
    (value) => {
      expect(throughSh(value)).toBe(value);
    },
  );

  it("leaves plain words readable", () => {
    expect(shellCommand(["mesh-host", "enrol", "https://cp.example:3000", "--token", "abc123.xyz", "--ca-pin", "sha256:00ff"])).toBe(
      "mesh-host enrol https://cp.example:3000 --token abc123.xyz --ca-pin sha256:00ff",
    );
  });
});
