// Two control planes on one embedded data directory would corrupt it silently: the second must
// refuse with a clear error, whatever PID namespace each runs in (two containers, one volume).
// The lock is the kernel's: a lock file naming a live but unrelated PID does not block a start,
// and a control plane that cannot bind its port exits non-zero, which frees the lock.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockDataDir } from "@mesh/db/migrate";
import { ControlPlane } from "../harness/control-plane";
import { WEB_DIR } from "../harness/paths";
import { waitFor } from "../harness/wait";

const SERVER = ["--import", "tsx", "src/server.ts"];
/** A new PID namespace (the server is its PID 1, as in a container); the server dies with `unshare`. */
const IN_PID_NAMESPACE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "--"];

function serverEnv(dataDir: string, port = 0): Record<string, string> {
  const env = {
    ...process.env,
    MESH_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    NODE_ENV: "production",
    MESH_ADMIN_PASSWORD: "e2e-admin-password",
  } as Record<string, string>;
  delete env.DATABASE_URL;
  return env;
}

/** Runs a control plane to its exit (it is expected to refuse), bounded in time. */
function runToExit(dataDir: string, opts: { port?: number; pidNamespace?: boolean } = {}) {
  const argv = [...(opts.pidNamespace ? IN_PID_NAMESPACE : []), process.execPath, ...SERVER];
  return spawnSync(argv[0]!, argv.slice(1), { cwd: WEB_DIR, env: serverEnv(dataDir, opts.port), encoding: "utf8", timeout: 90_000 });
}

/** Starts a control plane in its own PID namespace and waits until it listens. */
async function startInPidNamespace(dataDir: string): Promise<{ child: ChildProcess; output: () => string }> {
  const argv = [...IN_PID_NAMESPACE, process.execPath, ...SERVER];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: WEB_DIR, env: serverEnv(dataDir), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`control plane exited with ${code}:\n${out}`))));
  await Promise.race([waitFor("control plane in its PID namespace to listen", () => out.includes("Mesh control plane on"), 90_000), exited]);
  exited.catch(() => {});
  return { child, output: () => out };
}

describe("embedded data directory", () => {
  let cp: ControlPlane;
  let dataDir: string;
  const dirs: string[] = [];
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-cp-"));
    // A lock file left by a process that died, its PID since reused by a live process (this one).
    fs.writeFileSync(path.join(dataDir, "mesh.lock"), `pid ${process.pid} on ${os.hostname()}\n`);
    cp = await ControlPlane.start({ engine: "pglite", dataDir });
  });
  afterAll(async () => {
    await cp?.dispose();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("starts over a lock file naming a live process that holds no lock (a reused PID)", () => {
    expect(cp.output).toContain("Mesh control plane on");
    expect(fs.readFileSync(path.join(dataDir, "mesh.lock"), "utf8")).toBe(`pid ${cp.pid} on ${os.hostname()}\n`);
  });

  it("refuses a second control plane on the same directory", () => {
    const r = runToExit(dataDir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`data directory .* is in use by another process \\(process ${cp.pid} on `));
  });

  it("exits non-zero when its port is taken, and frees the lock as it goes", () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-cp-"));
    dirs.push(other);
    const r = runToExit(other, { port: cp.port });
    expect(r.error).toBeUndefined(); // not the timeout: it exited by itself
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${cp.port} \\(EADDRINUSE\\)`));
    lockDataDir(other)();
  });

  it("refuses a second control plane in another PID namespace, and the lock dies with the first", async () => {
    await cp.stop();
    const first = await startInPidNamespace(dataDir);
    try {
      // In its own namespace each server is PID 1: a PID file cannot tell them apart.
      const second = runToExit(dataDir, { pidNamespace: true });
      expect(second.status).toBe(1);
      expect(second.stderr).toMatch(/data directory .* is in use by another process \(process 1 on .*, as seen from its own PID namespace\)/);
      expect(first.child.exitCode).toBeNull();
    } finally {
      const gone = new Promise((r) => first.child.once("exit", r));
      first.child.kill("SIGKILL");
      await gone;
    }
    // Killed with -9: nothing of its own ran, the kernel drops the lock as the process goes.
    await waitFor(
      "the lock freed",
      () => {
        lockDataDir(dataDir)();
        return true;
      },
      30_000,
    );
  });
});
