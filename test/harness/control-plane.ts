// Starts the real control plane (apps/web's server entry) as a child process on
// a free port, on a fresh Postgres database or a fresh PGlite directory.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPostgresDatabase } from "@mesh/db/testing";
import { WEB_DIR } from "./paths";
import { waitFor } from "./wait";

export const ADMIN_PASSWORD = "e2e-admin-password";
export const ADMIN_API_KEY = "e2e-admin-api-key-0123456789";

export type Engine = "postgres" | "pglite";
export const engines = (): Engine[] => (process.env.DATABASE_URL ? ["postgres", "pglite"] : ["pglite"]);

export interface ControlPlaneOptions {
  engine: Engine;
  /** Reuse a database (restarts): a URL for postgres, a directory for pglite. */
  databaseUrl?: string;
  /** MESH_DATA_DIR: pglite's database, and with either engine the data kept beside it (the apt repository's key and pool). Given with postgres, the caller removes it. */
  dataDir?: string;
  port?: number;
  env?: Record<string, string>;
  /** Flags for node itself, before the script (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
  /** Start under this open-file limit, "soft:hard" (util-linux prlimit). */
  openFiles?: string;
}

export class ControlPlane {
  url = "";
  port = 0;
  output = "";
  private child?: ChildProcess;
  private dropDb?: () => Promise<void>;

  private constructor(readonly options: ControlPlaneOptions & { databaseUrl?: string; dataDir?: string }) {}

  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const opts = { ...options };
    let drop: (() => Promise<void>) | undefined;
    if (opts.engine === "postgres" && !opts.databaseUrl) {
      const db = await createPostgresDatabase("mesh_e2e");
      opts.databaseUrl = db.url;
      drop = db.drop;
    }
    if (opts.engine === "pglite" && !opts.dataDir) opts.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-cp-"));
    const cp = new ControlPlane(opts);
    cp.dropDb = drop;
    await cp.boot();
    return cp;
  }

  get databaseUrl() {
    return this.options.databaseUrl;
  }

  async boot(): Promise<void> {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      NODE_ENV: "production",
      PORT: String(this.options.port ?? this.port ?? 0),
      HOST: "127.0.0.1",
      MESH_ADMIN_PASSWORD: ADMIN_PASSWORD,
      MESH_ADMIN_API_KEY: ADMIN_API_KEY,
      MESH_PING_INTERVAL_MS: "1000",
      MESH_LAST_CHECKED_FLUSH_MS: "1000",
      MESH_LOG_LEVEL: "info",
      ...this.options.env,
    };
    delete env.DATABASE_URL;
    delete env.MESH_DATA_DIR;
    if (this.options.databaseUrl) env.DATABASE_URL = this.options.databaseUrl;
    if (this.options.dataDir) env.MESH_DATA_DIR = this.options.dataDir;
    this.output = "";
    const argv = [process.execPath, ...(this.options.nodeArgs ?? []), "--import", "tsx", "src/server.ts"];
    // prlimit execs the command: the child's pid is the control plane's.
    if (this.options.openFiles) argv.unshift("prlimit", `--nofile=${this.options.openFiles}`, "--");
    const child = spawn(argv[0]!, argv.slice(1), { cwd: WEB_DIR, env, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    child.stdout!.on("data", (d) => (this.output += d));
    child.stderr!.on("data", (d) => (this.output += d));
    const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`control plane exited with ${code}:\n${this.output}`))));
    const m = await Promise.race([
      waitFor("control plane to listen", () => /Mesh control plane on (https?):\/\/localhost:(\d+)/.exec(this.output), 90_000),
      exited,
    ]);
    this.port = Number(m[2]);
    this.url = `${m[1]}://127.0.0.1:${this.port}`;
  }

  /** Graceful stop (SIGTERM); resolves with the exit code. */
  async stop(): Promise<number | null> {
    const child = this.child;
    // A process killed by a signal (kill()) has no exit code: it is gone all the same.
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const done = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const code = await done;
    clearTimeout(t);
    return code;
  }

  /** Kills the process with `signal` (a crash, for restart tests and benches); resolves when it is gone. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill(signal);
    await gone;
  }

  get pid(): number {
    return this.child!.pid!;
  }

  rssKb(): number {
    const status = fs.readFileSync(`/proc/${this.child!.pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
  }

  async dispose(): Promise<void> {
    await this.stop();
    await this.dropDb?.();
    if (this.options.dataDir && this.options.engine === "pglite") fs.rmSync(this.options.dataDir, { recursive: true, force: true });
  }
}
