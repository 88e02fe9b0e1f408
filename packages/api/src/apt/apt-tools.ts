// The Debian tools the apt repository is built with (gpg, dpkg-scanpackages, apt-ftparchive), found
// on PATH, and the one way they are run: an argv, no shell, a timeout, stderr kept for the error.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** Each program the repository needs, and the Debian package that ships it. */
export const APT_TOOLS = [
  { program: "gpg", debianPackage: "gnupg" },
  { program: "gpgconf", debianPackage: "gnupg" },
  { program: "dpkg-scanpackages", debianPackage: "dpkg-dev" },
  { program: "apt-ftparchive", debianPackage: "apt-utils" },
] as const;

export interface MissingTools {
  programs: string[];
  /** What `apt-get install` needs, deduplicated. */
  debianPackages: string[];
}

function onPath(program: string, pathEnv: string): boolean {
  return pathEnv.split(":").some((dir) => {
    if (!dir) return false;
    try {
      fs.accessSync(path.join(dir, program), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The tools not on PATH (none: the repository can be built). */
export function missingAptTools(pathEnv = process.env.PATH ?? ""): MissingTools {
  const missing = APT_TOOLS.filter((t) => !onPath(t.program, pathEnv));
  return { programs: missing.map((t) => t.program), debianPackages: [...new Set(missing.map((t) => t.debianPackage))] };
}

export interface RunToolOptions {
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** stdout goes to this file (created or truncated); otherwise it is returned. */
  stdoutFile?: string;
}

const MAX_KEPT_BYTES = 64 * 1024;

export class ToolFailedError extends Error {
  constructor(argv: string[], how: string, stderr: string) {
    const last = stderr.trim().split("\n").slice(-5).join(" / ");
    super(`\`${argv.join(" ")}\` ${how}${last ? `: ${last}` : ""}`);
    this.name = "ToolFailedError";
  }
}

/** Runs argv and resolves with its stdout (empty when it went to a file); a non-zero exit or a timeout rejects. */
export function runTool(argv: string[], opts: RunToolOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const out = opts.stdoutFile ? fs.openSync(opts.stdoutFile, "w", 0o644) : "pipe";
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", out, "pipe"],
      timeout: opts.timeoutMs ?? 60_000,
      killSignal: "SIGKILL",
    });
    if (typeof out === "number") fs.closeSync(out);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString("utf8")).slice(-MAX_KEPT_BYTES)));
    child.once("error", (err) => reject(new ToolFailedError(argv, `could not start (${(err as NodeJS.ErrnoException).code ?? err.message})`, "")));
    child.once("close", (code, signal) => {
      if (code === 0) return resolve(stdout);
      reject(new ToolFailedError(argv, signal ? `was killed by ${signal} (timeout ${opts.timeoutMs ?? 60_000} ms)` : `exited ${code}`, stderr));
    });
  });
}
