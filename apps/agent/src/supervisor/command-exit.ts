// How a command of a unit ended, and what systemd makes of it: a clean exit or not, whether
// Restart= starts it again, and the one line the status and the log give it. Pure.
import type { UnitSpec } from "./unit-file";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The program could not be started at all (no such file, bad directory, ...). */
  error?: string;
}

/** Exit signals systemd counts as a clean stop of a long-running service. */
const CLEAN_SIGNALS = new Set(["SIGHUP", "SIGINT", "SIGTERM", "SIGPIPE"]);

export function succeeded(e: Exit, spec: Pick<UnitSpec, "type" | "successExitStatus">): boolean {
  if (e.error) return false;
  if (e.signal) return spec.type !== "oneshot" && CLEAN_SIGNALS.has(e.signal);
  return e.code === 0 || (e.code !== null && spec.successExitStatus.includes(e.code));
}

export function shouldRestart(policy: UnitSpec["restart"], clean: boolean, e: Exit): boolean {
  const uncleanSignal = !clean && e.signal !== null;
  switch (policy) {
    case "no":
      return false;
    case "always":
      return true;
    case "on-success":
      return clean;
    case "on-failure":
      return !clean;
    case "on-abnormal":
      return uncleanSignal;
    case "on-abort":
      return uncleanSignal;
  }
}

export function describeExit(e: Exit): string {
  if (e.error) return e.error;
  return e.signal ? `killed by ${e.signal}` : `exited with status ${e.code}`;
}

/** A timeout a timer can hold: "infinity" becomes the longest one setTimeout takes. */
export function bounded(ms: number): number {
  return Number.isFinite(ms) ? ms : 2 ** 31 - 1;
}
