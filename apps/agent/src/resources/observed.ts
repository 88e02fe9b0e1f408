// The state of one subject as a flat record, and the digest both sides compare:
// sha256 of the canonical JSON, taken over the keys the declaration names.
import { createHash } from "node:crypto";
import { canonicalJson } from "@mesh/protocol";

export type StateValue = string | number | boolean | null;
/** What a declaration asks for, or what stands on the machine; `type` says what kind of thing. */
export type State = { readonly type: string } & { readonly [key: string]: StateValue };

export function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export function digestOf(state: State): string {
  return sha256Hex(canonicalJson(state));
}

/**
 * `observed` seen through `declared`: only the keys the declaration names, so an
 * undeclared owner or an unpinned package version never counts as a difference.
 */
export function project(observed: State, declared: State): State {
  const out: Record<string, StateValue> = { type: observed.type };
  for (const key of Object.keys(declared)) if (key !== "type") out[key] = observed[key] ?? null;
  return out as State;
}

/** "644" and "0644" are the same mode; reports always say four digits. */
export function normaliseMode(mode: string | number): string {
  const n = typeof mode === "number" ? mode : parseInt(mode, 8);
  return (n & 0o7777).toString(8).padStart(4, "0");
}

/** Keys that name the subject rather than describe it; equal by construction. */
const NAMING = new Set(["path", "name", "unit"]);

/** One line on how `observed` differs from `declared`, as drift entries show it ("mode 0644, declared 0600"). */
export function describeDifference(observed: State | null, declared: State): string {
  if (!observed) return "missing";
  if (observed.type !== declared.type) return `is a ${observed.type}, declared ${declared.type}`;
  const parts: string[] = [];
  for (const key of Object.keys(declared)) {
    if (key === "type" || NAMING.has(key)) continue;
    const want = declared[key] ?? null;
    const have = observed[key] ?? null;
    if (want === have) continue;
    if (key === "sha256") parts.push(`content differs (sha256 ${short(have)}, declared ${short(want)})`);
    else if (key === "unmanaged") parts.push(`${have} unmanaged entries, declared none`);
    else parts.push(`${key} ${say(have)}, declared ${say(want)}`);
  }
  return parts.length ? parts.join("; ") : "differs";
}

function short(v: StateValue): string {
  return typeof v === "string" ? `${v.slice(0, 12)}…` : say(v);
}

function say(v: StateValue): string {
  return v === null ? "none" : String(v);
}
