// The real Runner on child_process.spawn, with no shell: argv[0] is looked up in
// PATH and every other element reaches the program as one argument, whatever it holds.
import { spawn } from "node:child_process";
import { DEFAULT_TIMEOUT_MS, MAX_OUTPUT_BYTES, type RunOptions, type RunResult, type Runner } from "./runner";
import { systemClock, type Clock } from "../clock";

/** How long a timed-out program gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 3_000;
/** How long to wait for the pipes to close after the program exited (a daemon it started may hold them). */
const CLOSE_GRACE_MS = 2_000;

export class ProcessRunner implements Runner {
  constructor(private readonly defaults: { timeoutMs?: number; clock?: Clock } = {}) {}

  run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    const [file, ...args] = argv;
    if (!file) return Promise.reject(new Error("cannot run an empty argv"));
    const timeoutMs = opts.timeoutMs ?? this.defaults.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const clock = this.defaults.clock ?? systemClock;

    return new Promise<RunResult>((resolve, reject) => {
      // Its own process group, so a timeout takes the maintainer scripts dpkg started
      // along with dpkg; and a host killed mid-apply does not take dpkg with it.
      const child = spawn(file, args, {
        shell: false,
        detached: true,
        env: opts.env ? { ...process.env, ...opts.env } : process.env,
        stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      });
      const stdout = new OutputTail(opts.maxOutputBytes ?? MAX_OUTPUT_BYTES);
      const stderr = new OutputTail(opts.maxOutputBytes ?? MAX_OUTPUT_BYTES);
      child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
      child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));

      let settled = false;
      let timedOut = false;
      let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
      let killTimer: unknown;
      let closeTimer: unknown;

      const signalGroup = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // The group is gone already: nothing left to stop.
        }
      };
      const timer = clock.setTimeout(() => {
        timedOut = true;
        signalGroup("SIGTERM");
        killTimer = clock.setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
      }, timeoutMs);

      const finish = () => {
        if (settled || !exit) return;
        settled = true;
        clock.clearTimeout(timer);
        clock.clearTimeout(killTimer);
        clock.clearTimeout(closeTimer);
        child.stdout!.destroy();
        child.stderr!.destroy();
        resolve({ code: exit.code, signal: exit.signal, stdout: stdout.text(), stderr: stderr.text(), timedOut });
      };

      child.on("error", (err) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        clock.clearTimeout(killTimer);
        reject(new Error(`cannot run ${file}: ${(err as NodeJS.ErrnoException).code ?? err.message}`, { cause: err }));
      });
      child.on("exit", (code, signal) => {
        exit = { code, signal };
        closeTimer = clock.setTimeout(finish, CLOSE_GRACE_MS);
      });
      child.on("close", (code, signal) => {
        exit ??= { code, signal };
        finish();
      });

      if (opts.input !== undefined && child.stdin) {
        // A program that exits without reading its input is not an error of ours.
        child.stdin.on("error", () => undefined);
        child.stdin.end(opts.input);
      }
    });
  }
}

/** Keeps only the last `limit` bytes written to it. */
class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - this.chunks[0]!.length >= this.limit) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString("utf8");
  }
}
