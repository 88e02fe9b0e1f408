// What stands at a path right now, and the digest both sides compare: sha256 of
// the canonical JSON of the state, so equal digests mean no drift.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import { canonicalJson } from "@mesh/protocol";

export type ObservedState =
  | { type: "file"; path: string; mode: string; sha256: string }
  | { type: "directory"; path: string; mode: string }
  | { type: "symlink"; path: string; target: string }
  | { type: "other"; path: string };

export function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export function digestOf(state: ObservedState): string {
  return sha256Hex(canonicalJson(state));
}

/** "644" and "0644" are the same mode; reports always say four digits. */
export function normaliseMode(mode: string | number): string {
  const n = typeof mode === "number" ? mode : parseInt(mode, 8);
  return (n & 0o7777).toString(8).padStart(4, "0");
}

/**
 * Observe `hostPath` (already resolved under the root) without following a
 * final symlink; `path` is the declared path the state is reported under.
 */
export async function observePath(hostPath: string, path: string): Promise<ObservedState | null> {
  let st;
  try {
    st = await fs.lstat(hostPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
  if (st.isSymbolicLink()) return { type: "symlink", path, target: await fs.readlink(hostPath) };
  if (st.isDirectory()) return { type: "directory", path, mode: normaliseMode(st.mode) };
  if (st.isFile()) {
    const content = await fs.readFile(hostPath);
    return { type: "file", path, mode: normaliseMode(st.mode), sha256: sha256Hex(content) };
  }
  return { type: "other", path };
}

/** One line on how `observed` differs from `declared`, as drift entries show it. */
export function describeDifference(observed: ObservedState | null, declared: ObservedState): string {
  if (!observed) return "missing";
  if (observed.type !== declared.type) return `is a ${observed.type}, declared ${declared.type}`;
  const parts: string[] = [];
  if (observed.type === "file" && declared.type === "file" && observed.sha256 !== declared.sha256) {
    parts.push(`content differs (sha256 ${observed.sha256.slice(0, 12)}…, declared ${declared.sha256.slice(0, 12)}…)`);
  }
  if ("mode" in observed && "mode" in declared && observed.mode !== declared.mode) {
    parts.push(`mode ${observed.mode}, declared ${declared.mode}`);
  }
  if (observed.type === "symlink" && declared.type === "symlink" && observed.target !== declared.target) {
    parts.push(`points to ${observed.target}, declared ${declared.target}`);
  }
  return parts.length ? parts.join("; ") : "differs";
}
