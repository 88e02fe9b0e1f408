// The embedded database is private (issue 10, item 5): a real PGlite directory is
// 0700 with 0600 files after start, a directory left open by an older version is
// fixed at start, and one that cannot be fixed (not ours) is refused with a clear message.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ControlPlane } from "../harness/control-plane";
import { WEB_DIR } from "../harness/paths";

/** Every path under dir (dir included) whose mode lets another user in, with its mode. */
function openToOthers(dir: string): string[] {
  const open: string[] = [];
  const check = (p: string) => {
    const stat = fs.lstatSync(p);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) open.push(`${path.relative(dir, p) || "."} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const e of fs.readdirSync(p)) check(path.join(p, e));
  };
  check(dir);
  return open;
}

function openUp(dir: string) {
  const walk = (p: string) => {
    const stat = fs.lstatSync(p);
    if (stat.isDirectory()) {
      fs.chmodSync(p, 0o755);
      for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    } else if (stat.isFile()) fs.chmodSync(p, 0o666);
  };
  walk(dir);
}

describe("the embedded data directory's modes", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("is 0700 with 0600 files after a start on a new directory, and is fixed when an older version left it open", async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-private-"));
    dirs.push(parent);
    const dataDir = path.join(parent, "data");
    const cp = await ControlPlane.start({ engine: "pglite", dataDir });
    try {
      const files = fs.readdirSync(path.join(dataDir, "pglite"), { recursive: true });
      expect(files.length).toBeGreaterThan(100);
      expect(openToOthers(dataDir)).toEqual([]);
    } finally {
      await cp.stop();
    }

    openUp(dataDir);
    expect(openToOthers(dataDir).length).toBeGreaterThan(100);
    const again = await ControlPlane.start({ engine: "pglite", dataDir });
    try {
      expect(openToOthers(dataDir)).toEqual([]);
    } finally {
      await again.stop();
    }
  });

  it("refuses to start when the directory is open to others and not ours to fix", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-not-ours-"));
    dirs.push(dataDir);
    fs.writeFileSync(path.join(dataDir, "leftover"), "x");
    fs.chmodSync(path.join(dataDir, "leftover"), 0o666);
    fs.chmodSync(dataDir, 0o755);
    // Owned by root, run as nobody: the control plane cannot chmod it.
    const env = { ...process.env, MESH_DATA_DIR: dataDir, PORT: "0", NODE_ENV: "production", HOME: os.tmpdir() } as Record<string, string>;
    delete env.DATABASE_URL;
    const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "--import", "tsx", "src/server.ts"], {
      cwd: WEB_DIR,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).toMatch(/the data directory .* is open to other users and cannot be made private \(.* is 0755 and belongs to uid 0\)/);
    expect(r.status).toBe(1);
  });
});
