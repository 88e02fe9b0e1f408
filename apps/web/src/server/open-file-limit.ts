// The open-file limit of this process, its soft limit at the hard one from the start, and
// the socket budget derived from it (past it new connections are answered 503).
import { execFileSync } from "node:child_process";
import fs from "node:fs";

export interface OpenFileLimit {
  soft: number;
  hard: number;
  /** Whether the soft limit was raised at this start. */
  raised: boolean;
}

/** File descriptors kept free beyond those open when the server starts listening (database files, logs, modules read later). */
export const SPARE_FILES = 64;

/** Descriptors this process holds now; null where /proc is not there. */
export function openFileCount(): number | null {
  try {
    return fs.readdirSync("/proc/self/fd").length;
  } catch {
    return null;
  }
}

function readLimit(): { soft: number; hard: number } | null {
  try {
    const line = fs
      .readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const [soft, hard] = (line?.match(/\s(\d+|unlimited)\s+(\d+|unlimited)\s/)?.slice(1) ?? []).map((v) =>
      v === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(v),
    );
    return soft !== undefined && hard !== undefined && Number.isFinite(soft) && Number.isFinite(hard) ? { soft, hard } : null;
  } catch {
    return null;
  }
}

/**
 * Node raises its own soft limit to the hard one as it starts (node.cc, PlatformInit); the hard
 * limit is what LimitNOFILE= or the shell's `ulimit -Hn` gave. When it did not (a runtime that
 * does not), util-linux prlimit raises it (no privilege needed). Null where unreadable (not Linux).
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

/** Client sockets this process can hold and still open its own files: call once its own files are open (before listen). */
export function socketBudget(limit: OpenFileLimit | null, openNow: number | null = openFileCount()): number {
  if (!limit) return Number.MAX_SAFE_INTEGER;
  return Math.max(16, limit.soft - (openNow ?? 0) - SPARE_FILES);
}
