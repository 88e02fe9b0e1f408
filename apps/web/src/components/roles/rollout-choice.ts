// The rollout an admin picks for a save, as the form holds it (strings as typed), and the
// RolloutPolicy it stands for, checked with the wire schema so the form refuses what the API would.
import { RECOMMENDED_ROLLOUT_POLICY, RolloutPolicy, StagedRolloutPolicy } from "@mesh/protocol";

export interface RolloutChoice {
  mode: "staged" | "all-at-once";
  canaryKind: "count" | "percent" | "selector";
  /** A number for count/percent, a JSON selector for selector. */
  canary: string;
  wavesKind: "size" | "percent";
  waves: string;
  haltAtFailurePercent: string;
  soakSeconds: string;
  waveTimeoutSeconds: string;
  /** Store this as the role's default policy too (role.upsert's rolloutPolicy). */
  makeDefault: boolean;
}

/** The form for a policy: the role's stored one, else the recommended one (the staged fields stay filled for all at once too). */
export function choiceOf(stored: unknown): RolloutChoice {
  const parsed = RolloutPolicy.safeParse(stored);
  const policy = parsed.success ? parsed.data : RECOMMENDED_ROLLOUT_POLICY;
  const staged = policy.mode === "staged" ? policy : RECOMMENDED_ROLLOUT_POLICY;
  const c = staged.canary;
  return {
    mode: policy.mode,
    canaryKind: "count" in c ? "count" : "percent" in c ? "percent" : "selector",
    canary: "count" in c ? String(c.count) : "percent" in c ? String(c.percent) : JSON.stringify(c.selector),
    wavesKind: "size" in staged.waves ? "size" : "percent",
    waves: String("size" in staged.waves ? staged.waves.size : staged.waves.percent),
    haltAtFailurePercent: String(staged.haltAtFailurePercent),
    soakSeconds: String(staged.soakSeconds),
    waveTimeoutSeconds: String(staged.waveTimeoutSeconds),
    makeDefault: false,
  };
}

/** The policy the form stands for, or why it stands for none. */
export function policyOf(choice: RolloutChoice): { policy: RolloutPolicy; error?: undefined } | { policy?: undefined; error: string } {
  if (choice.mode === "all-at-once") return { policy: { mode: "all-at-once" } };
  const num = (s: string) => (s.trim() === "" ? NaN : Number(s));
  let canary: unknown;
  if (choice.canaryKind === "selector") {
    try {
      canary = { selector: JSON.parse(choice.canary) };
    } catch {
      return { error: "The canary selector is not valid JSON." };
    }
  } else canary = { [choice.canaryKind]: num(choice.canary) };
  const r = StagedRolloutPolicy.safeParse({
    mode: "staged",
    canary,
    waves: { [choice.wavesKind]: num(choice.waves) },
    haltAtFailurePercent: num(choice.haltAtFailurePercent),
    soakSeconds: num(choice.soakSeconds),
    waveTimeoutSeconds: num(choice.waveTimeoutSeconds),
  });
  if (r.success) return { policy: r.data };
  const FIELD: Record<string, string> = {
    canary: "Canary",
    waves: "Waves",
    haltAtFailurePercent: "Halt at",
    soakSeconds: "Soak",
    waveTimeoutSeconds: "Wave timeout",
  };
  return { error: r.error.issues.map((i) => `${FIELD[String(i.path[0])] ?? String(i.path[0] ?? "Rollout")}: ${i.message}`).join("; ") };
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
const seconds = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`);

/** "canary 1 node, then 10 % at a time, halt at 5 % failures" (soak and a non-default timeout added when set). */
export function policyInWords(policy: RolloutPolicy): string {
  if (policy.mode === "all-at-once") return "all at once: every matching node gets it now";
  const c = policy.canary;
  const canary =
    "count" in c
      ? `canary ${plural(c.count, "node")}`
      : "percent" in c
        ? `canary ${c.percent} % of the nodes`
        : `canary the nodes matching ${JSON.stringify(c.selector)}`;
  const waves = "size" in policy.waves ? `then ${plural(policy.waves.size, "node")} at a time` : `then ${policy.waves.percent} % at a time`;
  const parts = [canary, waves, `halt at ${policy.haltAtFailurePercent} % failures`];
  if (policy.soakSeconds > 0) parts.push(`soak ${seconds(policy.soakSeconds)} between waves`);
  if (policy.waveTimeoutSeconds !== RECOMMENDED_ROLLOUT_POLICY.waveTimeoutSeconds) parts.push(`a wave times out after ${seconds(policy.waveTimeoutSeconds)}`);
  return parts.join(", ");
}
