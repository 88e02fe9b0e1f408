// The one reader of the host's numeric settings (MESH_RECONCILE_*, MESH_UPGRADE_TRIAL_MS,
// MESH_SETTLE_WAIT_MS, MESH_LINK_TIMEOUT_MS, MESH_SOURCE_MAX_BYTES): unset or empty is the default;
// anything else must be a whole number, or the host refuses to start and names the variable (never
// NaN, never a default in its place).
import { HostError } from "./host-error";

export interface EnvNumberOptions {
  /** 1 (the default) where 0 means nothing, 0 where "do not wait" is a setting. */
  min?: 0 | 1;
  /** What the number counts, for the error. */
  unit?: "milliseconds" | "bytes";
}

export function wholeFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, { min = 1, unit = "milliseconds" }: EnvNumberOptions = {}): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min)
    throw new HostError("usage", `${name}=${raw}: must be a whole number of ${unit} ${min === 0 ? "(0 or more)" : "above 0"}`);
  return n;
}

/** The longest timer Node keeps (2^31 - 1 ms, ~24.8 days): a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A duration in milliseconds, at most MAX_TIMER_MS (a 30-day trial must not end at once). */
export function msFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, { min = 1 }: { min?: 0 | 1 } = {}): number {
  const ms = wholeFromEnv(env, name, fallback, { min, unit: "milliseconds" });
  if (ms > MAX_TIMER_MS) throw new HostError("usage", `${name}=${ms}: at most ${MAX_TIMER_MS} milliseconds (about 24.8 days)`);
  return ms;
}
