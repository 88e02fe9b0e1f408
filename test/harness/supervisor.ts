// What systemd does for mesh-host.service where systemd is not PID 1: start the
// installed binary, and after every exit run the unit's rollback step, then start it again.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO } from "./paths";

export const ROLLBACK_SCRIPT = path.join(REPO, "infra/package/mesh-host-rollback.sh");

export interface Start {
  at: number;
  /** The version the binary said it was in its first log line, when it got that far. */
  version?: string;
  exit?: { code: number | null; signal: string | null; at: number };
  output: string;
}

export class Supervisor {
  readonly starts: Start[] = [];
  private child: ChildProcess | null = null;
  private stopping = false;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    /** The installed binary: a bundle run with node, as `mesh-host run` from source is. */
    readonly binary: string,
    readonly stateDir: string,
    readonly args: string[],
    readonly env: Record<string, string>,
    /** Restart=always with RestartSec. */
    readonly restartMs = 200,
  ) {}

  start(): void {
    this.stopping = false;
    this.spawnOnce();
  }

  private spawnOnce(): void {
    const start: Start = { at: Date.now(), output: "" };
    this.starts.push(start);
    const child = spawn(process.execPath, [this.binary, "run", ...this.args], { env: { ...process.env, ...this.env }, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    const take = (d: Buffer) => {
      start.output += d;
      if (!start.version) start.version = /"hostVersion":"([^"]+)"/.exec(start.output)?.[1];
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        start.exit = { code, signal, at: Date.now() };
        // ExecStopPost: after every exit, whatever its cause.
        const post = spawnSync("sh", [ROLLBACK_SCRIPT, this.stateDir, this.binary], { encoding: "utf8" });
        start.output += post.stderr;
        if (post.status !== 0) start.output += `\nrollback step exited ${post.status}\n`;
        if (!this.stopping) setTimeout(() => !this.stopping && this.spawnOnce(), this.restartMs);
        resolve();
      }),
    );
  }

  /**
   * When a start sent its first report: the log time of the first reconcile after link up
   * (the host's own clock, so a pipe that delivers the line late does not skew it).
   */
  static firstReportAt(start: Start): number | undefined {
    let up = false;
    for (const entry of Supervisor.logOf(start)) {
      if (entry.msg === "link up") up = true;
      else if (up && entry.msg === "reconciled") return entry.time;
    }
    return undefined;
  }

  /** The log time of the first line with this message. */
  static loggedAt(start: Start, msg: string): number | undefined {
    return Supervisor.logOf(start).find((e) => e.msg === msg)?.time;
  }

  private static logOf(start: Start): { msg?: string; time?: number }[] {
    const out: { msg?: string; time?: number }[] = [];
    for (const line of start.output.split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        out.push(JSON.parse(line));
      } catch {
        // a line cut by the exit
      }
    }
    return out;
  }

  /** The versions of the binaries started, in order. */
  versions(): (string | undefined)[] {
    return this.starts.map((s) => s.version);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const t = setTimeout(() => child.kill("SIGKILL"), 5000);
      child.kill("SIGTERM");
      await this.exited;
      clearTimeout(t);
    }
  }

  installedBytes(): Buffer {
    return fs.readFileSync(this.binary);
  }
}
