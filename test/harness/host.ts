// Runs the real mesh-host (apps/agent/dist/mesh-host.js) against a sandbox root
// and state directory.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { HOST_BIN } from "./paths";

export class Host {
  readonly root: string;
  readonly stateDir: string;
  output = "";
  private child?: ChildProcess;

  constructor(readonly name = "host") {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), `mesh-${name}-`));
    this.root = path.join(base, "root");
    this.stateDir = path.join(base, "state");
    // A sandbox that looks like a machine: the host never creates parents it would not own.
    fs.mkdirSync(path.join(this.root, "etc"), { recursive: true });
  }

  private flags(interval = 1) {
    return ["--state-dir", this.stateDir, "--root", this.root, "--interval", String(interval)];
  }

  /** Runs a mesh-host command to completion. */
  cli(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000) {
    const r = spawnSync(process.execPath, [HOST_BIN, ...args, ...this.flags()], { encoding: "utf8", env: { ...process.env, ...env }, timeout: timeoutMs });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /**
   * cli() without blocking this process: for a command that must reach something this test
   * process serves itself (a load balancer in harness/balancer.ts), which spawnSync would starve.
   */
  cliAsync(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [HOST_BIN, ...args, ...this.flags()], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout!.on("data", (d) => (stdout += d));
      child.stderr!.on("data", (d) => (stderr += d));
      const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.once("error", reject);
      child.once("close", (code) => {
        clearTimeout(t);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /**
   * Runs a printed command line exactly as an operator would, with sh, where `mesh-host` is this
   * sandboxed host (a wrapper first in PATH adding --state-dir, --root and --interval).
   */
  shell(command: string, timeoutMs = 60_000) {
    const bin = path.join(path.dirname(this.root), "bin");
    fs.mkdirSync(bin, { recursive: true });
    const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
    const wrapper = path.join(bin, "mesh-host");
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${[process.execPath, HOST_BIN].map(quote).join(" ")} "$@" ${this.flags().map(quote).join(" ")}\n`, {
      mode: 0o755,
    });
    const r = spawnSync("sh", ["-c", command], { encoding: "utf8", env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, timeout: timeoutMs });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** Enrols as the dashboard's command would: pinned over https, explicitly insecure over http. */
  enrol(url: string, token: string, trust: string[] = url.startsWith("https:") ? [] : ["--insecure"]) {
    return this.cli(["enrol", url, "--token", token, ...trust]);
  }

  /** enrol() through cliAsync(). */
  enrolAsync(url: string, token: string, trust: string[] = url.startsWith("https:") ? [] : ["--insecure"]) {
    return this.cliAsync(["enrol", url, "--token", token, ...trust]);
  }

  status(): any {
    const r = this.cli(["status", "--json"]);
    return JSON.parse(r.stdout);
  }

  run(interval = 1, env: Record<string, string> = {}): ChildProcess {
    const child = spawn(process.execPath, [HOST_BIN, "run", ...this.flags(interval)], {
      env: { ...process.env, MESH_LOG_LEVEL: "debug", MESH_LINK_TIMEOUT_MS: "5000", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    child.stdout!.on("data", (d) => (this.output += d));
    child.stderr!.on("data", (d) => (this.output += d));
    return child;
  }

  get pid() {
    return this.child?.pid;
  }

  file(p: string) {
    return path.join(this.root, p);
  }

  /** The text of the file at `p` under the root, or null when there is none. */
  readFile(p: string): string | null {
    return fs.existsSync(this.file(p)) ? fs.readFileSync(this.file(p), "utf8") : null;
  }

  async stop() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode) return;
    const done = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 5000);
    await done;
    clearTimeout(t);
  }

  /**
   * Services the host's own supervisor runs outlive the host by design; a test ends them as
   * the host would (SIGTERM to each supervisor, which stops its service), SIGKILL after 30 s.
   */
  async stopServices() {
    const dir = this.file("run/mesh-host/services");
    const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
    for (const f of files) {
      const status = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));
      const pids = [status.supervisor?.pid, status.main?.pid].filter((p): p is number => typeof p === "number");
      const alive = () => pids.filter((p) => fs.existsSync(`/proc/${p}`) && !/\) Z /.test(fs.readFileSync(`/proc/${p}/stat`, "utf8")));
      if (!alive().length) continue;
      try {
        process.kill(status.supervisor.pid, "SIGTERM");
      } catch {
        // already gone
      }
      const deadline = Date.now() + 30_000;
      while (alive().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const p of alive()) {
        try {
          process.kill(-p, "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
    }
  }

  dispose() {
    fs.rmSync(path.dirname(this.root), { recursive: true, force: true });
  }
}
