// `mesh-host apply --file` refuses a bad declaration as a whole, one test per class
// of bad input, and leaves the state dir and the machine exactly as they were.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { sandbox, tempDirs } from "../testing/temp-dirs";

const BIN = join(__dirname, "..", "..", "dist", "mesh-host.js");
const freshDir = tempDirs("mesh-apply-");

let base: string;
let root: string;
let state: string;
beforeEach(() => {
  ({ base, root, state } = sandbox(freshDir));
});

function apply(body: unknown, env: Record<string, string> = {}) {
  const file = join(base, `decl-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof body === "string" ? body : JSON.stringify(body));
  const r = spawnSync(process.execPath, [BIN, "apply", "--file", file, "--state-dir", state, "--root", root], {
    encoding: "utf8",
    env: { ...process.env, MESH_LOG_LEVEL: "warn", ...env },
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const good = { version: 1, resources: [{ type: "file", id: "motd", path: "/motd", content: "hello\n" }] };

describe("apply refuses a bad declaration as a whole and loses nothing", () => {
  const bad: [string, unknown, RegExp][] = [
    ["a declaration that does not parse", { version: 2, resources: [{ type: "file", id: "x", path: "/x" }] }, /give exactly one of content or source/],
    ["a repeated id", { version: 2, resources: [good.resources[0], { type: "file", id: "motd", path: "/other", content: "" }] }, /duplicate id "motd"/],
    ["a repeated path", { version: 2, resources: [good.resources[0], { type: "file", id: "other", path: "/motd", content: "" }] }, /duplicate path \/motd/],
    [
      "a dependency cycle",
      {
        version: 2,
        resources: [
          { type: "file", id: "a", path: "/a", content: "", after: ["b"] },
          { type: "file", id: "b", path: "/b", content: "", after: ["a"] },
        ],
      },
      /dependency cycle: a -> b -> a/,
    ],
    ["a path with '..'", { version: 2, resources: [{ type: "file", id: "up", path: "/srv/../etc/x", content: "" }] }, /must be normalised/],
    [
      "a path outside the root through a symlink",
      { version: 2, resources: [good.resources[0], { type: "file", id: "evil", path: "/escape/passwd", content: "x" }] },
      /evil: \/escape\/passwd resolves outside the root/,
    ],
    [
      "two paths that are one once symlinks are resolved",
      {
        version: 2,
        resources: [
          { type: "file", id: "one", path: "/real/f", content: "1" },
          { type: "file", id: "two", path: "/alias/f", content: "2" },
        ],
      },
      /two: \/alias\/f is the same path as "one"/,
    ],
  ];

  for (const [name, body, message] of bad) {
    it(`refuses ${name}`, () => {
      mkdirSync(join(root, "real"));
      symlinkSync("real", join(root, "alias"));
      symlinkSync(tmpdir(), join(root, "escape"));
      expect(apply(good).code).toBe(0);
      const before = readFileSync(join(state, "store.json"), "utf8");
      const r = apply(body);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      // Nothing lost, nothing changed: the store and the machine are as the good declaration left them.
      expect(readFileSync(join(state, "store.json"), "utf8")).toBe(before);
      expect(readFileSync(join(root, "motd"), "utf8")).toBe("hello\n");
      expect(readdirSync(root).sort()).toEqual(["alias", "escape", "motd", "real"]);
      expect(readdirSync(join(root, "real"))).toEqual([]);
    });
  }
});

describe("fail points", () => {
  const three = {
    version: 1,
    resources: [
      { type: "directory", id: "d", path: "/d" },
      { type: "file", id: "a", path: "/d/a", content: "a" },
      { type: "file", id: "b", path: "/d/b", content: "b" },
    ],
  };

  it("MESH_FAILPOINT kills the host at the n-th hit of a step; the next apply settles and finishes", () => {
    const killed = apply(three, { MESH_FAILPOINT: "applied-before-record:2" });
    expect(killed.signal).toBe("SIGKILL");
    // Two changes made, none recorded yet: both are covered by intents on disk.
    const records = JSON.parse(readFileSync(join(state, "store.json"), "utf8")).records;
    expect(records.map((r: { id: string; intent?: { op: string } }) => [r.id, r.intent?.op])).toEqual([
      ["d", "create"],
      ["a", "create"],
      ["b", "create"],
    ]);
    const again = apply(three);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/1 created, 0 adopted, 0 updated, 0 removed, 0 restored, 0 released, 2 unchanged, 0 errors, 0 skipped; 3 owned/);
  });

  it("an unknown fail point is said and ignored", () => {
    const r = apply(three, { MESH_FAILPOINT: "nowhere:1" });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/MESH_FAILPOINT=nowhere:1 ignored/);
  });
});
