// A local user who owns a declared directory attacks the root daemon: a real mesh-host apply,
// and a second, unprivileged user (nobody, via setpriv) planting and swapping symlinks under it.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { HOST_BIN } from "../harness/paths";

const NOBODY = 65534;
const runsAsRoot = process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0;
const temps: string[] = [];
afterAll(() => temps.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

let base: string;
let root: string;
let state: string;
/** Outside --root, root's own: what the attacker wants chowned, opened up or deleted. */
let target: string;
let targetDir: string;

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-path-safety-"));
  temps.push(base);
  // The second user must reach the sandbox, as it reaches /home on a machine.
  fs.chmodSync(base, 0o755);
  root = path.join(base, "root");
  state = path.join(base, "state");
  fs.mkdirSync(path.join(root, "etc"), { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  fs.writeFileSync(path.join(root, "etc/group"), "root:x:0:\nnogroup:x:65534:\n");
  fs.mkdirSync(path.join(base, "outside/dir"), { recursive: true, mode: 0o755 });
  target = path.join(base, "outside/target");
  fs.writeFileSync(target, "root's secret\n", { mode: 0o600 });
  targetDir = path.join(base, "outside/dir");
  fs.writeFileSync(path.join(targetDir, "keep"), "root's file\n", { mode: 0o600 });
});

const home = [
  { type: "directory", id: "home", path: "/home", mode: "0755" },
  { type: "directory", id: "u", path: "/home/u", mode: "0755", owner: "nobody", group: "nogroup" },
];

function declare(version: number, resources: unknown[]): string {
  const file = path.join(base, `decl-${version}.json`);
  fs.writeFileSync(file, JSON.stringify({ version, resources }));
  return file;
}

function apply(file: string) {
  const r = spawnSync(process.execPath, [HOST_BIN, "apply", "--file", file, "--state-dir", state, "--root", root], {
    encoding: "utf8",
    env: { ...process.env, MESH_LOG_LEVEL: "warn" },
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** A shell command as the unprivileged user. */
function asNobody(command: string): void {
  const r = spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "sh", "-ec", command], { encoding: "utf8", cwd: "/" });
  if (r.status !== 0) throw new Error(`as nobody: ${command}: ${r.stderr}`);
}

/**
 * mesh-host apply stopped (SIGSTOP, by its own fail point) after observing and before acting:
 * `attack` changes the machine there, then the host goes on.
 */
async function applyWithRace(file: string, attack: () => void): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [HOST_BIN, "apply", "--file", file, "--state-dir", state, "--root", root], {
    env: { ...process.env, MESH_LOG_LEVEL: "warn", MESH_FAILPOINT: "before-apply", MESH_FAILPOINT_ACTION: "stop" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  for (;;) {
    const stat = fs.readFileSync(`/proc/${child.pid}/stat`, "utf8");
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("T")) break;
    if (child.exitCode !== null) throw new Error(`mesh-host exited before its fail point: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  attack();
  child.kill("SIGCONT");
  return { code: await exited, out };
}

function untouched(p: string, mode: number): void {
  const st = fs.lstatSync(p);
  expect({ uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 }).toEqual({ uid: 0, gid: 0, mode });
}

describe.skipIf(!runsAsRoot)("a local user cannot turn the host's root against root's files", () => {
  it("(a) a symlinked ancestor planted by the user is refused with a clear error, and nothing is written through it", () => {
    expect(apply(declare(1, home)).code).toBe(0);
    const protectedDir = path.join(root, "protected");
    fs.mkdirSync(protectedDir, { mode: 0o700 });
    // No race: the link is there before the host looks, pointing at a root-only directory inside the root.
    asNobody(`ln -s ${protectedDir} ${path.join(root, "home/u/.config")}`);
    const r = apply(declare(2, [...home, { type: "file", id: "app-conf", path: "/home/u/.config/app.conf", content: "x\n", mode: "0644" }]));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /app-conf: \/home\/u\/\.config\/app\.conf: \/home\/u\/\.config is a symlink in a directory owned by uid 65534; not followed \(an unsafe path transition/,
    );
    expect(fs.readdirSync(protectedDir)).toEqual([]);
  });

  it("(b) a declared directory swapped for a symlink between observe and chown/chmod: the root-owned target is neither chowned nor chmodded", async () => {
    const cache = { type: "directory", id: "cache", path: "/home/u/cache", mode: "0755", owner: "nobody", group: "nogroup" };
    const file = declare(1, [...home, cache]);
    expect(apply(file).code).toBe(0);
    asNobody(`chmod 0700 ${path.join(root, "home/u/cache")}`); // drift, so that the host acts on it
    const r = await applyWithRace(file, () => asNobody(`cd ${path.join(root, "home/u")} && mv cache cache.old && ln -s ${target} cache`));
    untouched(target, 0o600);
    expect(fs.readFileSync(target, "utf8")).toBe("root's secret\n");
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/cache: \/home\/u\/cache/);
  });

  it("(c) purge never follows a directory swapped for a symlink: nothing outside is deleted, chowned or chmodded", async () => {
    const inbox = { type: "directory", id: "inbox", path: "/home/u/inbox", mode: "0755", owner: "nobody", group: "nogroup", purge: true };
    const file = declare(1, [...home, inbox]);
    expect(apply(file).code).toBe(0);
    asNobody(`touch ${path.join(root, "home/u/inbox/junk")}`); // an unmanaged entry: the host purges
    const r = await applyWithRace(file, () => asNobody(`cd ${path.join(root, "home/u")} && mv inbox inbox.old && ln -s ${targetDir} inbox`));
    expect(fs.readdirSync(targetDir)).toEqual(["keep"]);
    untouched(targetDir, 0o755);
    untouched(path.join(targetDir, "keep"), 0o600);
    expect(r.code).toBe(1);
    // The user's own junk is still where the user moved it; nothing of root's was touched.
    expect(fs.existsSync(path.join(root, "home/u/inbox.old/junk"))).toBe(true);
  });
});
