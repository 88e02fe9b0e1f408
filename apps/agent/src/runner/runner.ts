// The one way the host runs a program: an argv (never a shell string), a timeout,
// and output kept bounded, so a test can see exactly what ran and nothing hangs forever.
// dpkg, apt-get and systemctl for the resources, getent for accounts, dpkg-query and systemctl
// for the facts, `mesh-host version` for the self-upgrade all go through it (a Runner is injected;
// ProcessRunner is the real one). The supervisor alone spawns directly: it starts long-lived
// processes it must own (supervisor/unit-processes.ts, supervisor/supervised-manager.ts).
// Biome's noRestrictedImports keeps node:child_process out of everything else.
export interface RunOptions {
  /** Killed after this long; default DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Added to (and overriding) the host's own environment. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed; without it stdin is /dev/null, so a prompt sees EOF instead of hanging. */
  input?: string;
  /** How much of each stream is kept (its tail); default MAX_OUTPUT_BYTES. A listing read whole asks for more. */
  maxOutputBytes?: number;
}

export interface RunResult {
  /** Exit status, or null when a signal ended the program. */
  code: number | null;
  /** The last MAX_OUTPUT_BYTES of each stream. */
  stdout: string;
  stderr: string;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

export interface Runner {
  /** Resolves with whatever the program did (a non-zero exit is a result); rejects only when it could not be started. */
  run(argv: string[], opts?: RunOptions): Promise<RunResult>;
}

export const DEFAULT_TIMEOUT_MS = 120_000;
/** apt and dpkg can print megabytes; the tail holds the error that matters. */
export const MAX_OUTPUT_BYTES = 64 * 1024;

/** A program that ran and did not succeed: what ran, how it ended, and the last words it said. */
export class CommandFailedError extends Error {
  readonly argv: string[];
  readonly result: RunResult;
  constructor(argv: string[], result: RunResult, what?: string) {
    super(`${what ? `${what}: ` : ""}${describeRun(argv, result)}`);
    this.name = "CommandFailedError";
    this.argv = argv;
    this.result = result;
  }
}

/** "`dpkg -i x.deb` exited 1: <its last stderr lines>", for errors and reports. */
export function describeRun(argv: string[], result: RunResult): string {
  const how = result.timedOut ? "timed out" : result.signal ? `was killed by ${result.signal}` : `exited ${result.code}`;
  const last = lastLines(result.stderr || result.stdout, 5);
  return `\`${argv.join(" ")}\` ${how}${last ? `: ${last}` : ""}`;
}

/** Run and require exit 0; the error carries the result for the report. */
export async function runOrThrow(runner: Runner, argv: string[], opts?: RunOptions, what?: string): Promise<RunResult> {
  const result = await runner.run(argv, opts);
  if (result.code !== 0 || result.timedOut) throw new CommandFailedError(argv, result, what);
  return result;
}

/** The stdout of a run that exited 0, or null when it could not start, failed or timed out: for probes whose absence is an answer. */
export async function outputOf(runner: Runner, argv: string[], opts?: RunOptions): Promise<string | null> {
  const result = await runner.run(argv, opts).catch(() => null);
  return result && result.code === 0 && !result.timedOut ? result.stdout : null;
}

function lastLines(text: string, n: number): string {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(" / ");
}
