// The open-file limit of this process: raised at start from the soft to the hard limit
// (`npm start` has no unit to set LimitNOFILE=), and the socket budget derived from it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

export interface OpenFileLimit {
  soft: number;
  hard: number;
  /** Whether the soft limit was raised at this start. */
  raised: boolean;
}

/** File descriptors kept for everything but client sockets: database, logs, modules, Next's files. */
export const RESERVED_FILES = 128;

function readLimit(): { soft: number; hard: number } | null {
  try {
    const line = fs.readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"));
    const [soft, hard] = (line?.match(/\s(\d+|unlimited)\s+(\d+|unlimited)\s/)?.slice(1) ?? []).map((v) => (v === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(v)));
    return soft !== undefined && hard !== undefined && Number.isFinite(soft) && Number.isFinite(hard) ? { soft, hard } : null;
  } catch {
    return null;
  }
}

/**
 * Node has no setrlimit: util-linux's prlimit sets this process's soft limit to its hard one
 * (no privilege needed). Null where the limit cannot be read (not Linux).
 */
export function raiseOpenFileLimit(): OpenFileLimit | null {
  const before = readLimit();
  if (!before) return null;
  if (before.soft >= before.hard) return { ...before, raised: false };
  try {
    execFileSync("prlimit", [`--pid=${process.pid}`, `--nofile=${before.hard}:${before.hard}`], { stdio: "ignore", timeout: 5000 });
  } catch {
    return { ...before, raised: false };
  }
  const after = readLimit() ?? before;
  return { ...after, raised: after.soft > before.soft };
}

/** Client sockets this process can hold and still open its own files. */
export const socketBudget = (limit: OpenFileLimit | null): number => (limit ? Math.max(16, limit.soft - RESERVED_FILES) : Number.MAX_SAFE_INTEGER);
