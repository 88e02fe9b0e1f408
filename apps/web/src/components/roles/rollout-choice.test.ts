import { describe, expect, it } from "vitest";
import { RECOMMENDED_ROLLOUT_POLICY } from "@mesh/protocol";
import { choiceOf, policyInWords, policyOf } from "./rollout-choice";

describe("the rollout choice of a save", () => {
  it("proposes the recommended policy to a role without one, in words", () => {
    const c = choiceOf(null);
    expect(c.mode).toBe("staged");
    expect(policyOf(c).policy).toEqual(RECOMMENDED_ROLLOUT_POLICY);
    expect(policyInWords(RECOMMENDED_ROLLOUT_POLICY)).toBe("canary 1 node, then 10 % at a time, halt at 5 % failures");
  });

  it("preselects the stored policy, all at once included, and round-trips a selector canary", () => {
    expect(choiceOf({ mode: "all-at-once" }).mode).toBe("all-at-once");
    expect(policyOf(choiceOf({ mode: "all-at-once" })).policy).toEqual({ mode: "all-at-once" });
    const stored = {
      mode: "staged",
      canary: { selector: { labels: { canary: "yes" } } },
      waves: { size: 50 },
      haltAtFailurePercent: 2,
      soakSeconds: 300,
      waveTimeoutSeconds: 900,
    };
    expect(policyOf(choiceOf(stored)).policy).toEqual(stored);
    expect(policyInWords(policyOf(choiceOf(stored)).policy!)).toBe(
      'canary the nodes matching {"labels":{"canary":"yes"}}, then 50 nodes at a time, halt at 2 % failures, soak 5 min between waves, a wave times out after 15 min',
    );
  });

  it("refuses what the API would, naming the field", () => {
    expect(policyOf({ ...choiceOf(null), canary: "0" }).error).toMatch(/^Canary/);
    expect(policyOf({ ...choiceOf(null), waveTimeoutSeconds: "5" }).error).toMatch(/^Wave timeout/);
    expect(policyOf({ ...choiceOf(null), canaryKind: "selector", canary: "{" }).error).toMatch(/not valid JSON/);
    expect(policyOf({ ...choiceOf(null), haltAtFailurePercent: "" }).error).toMatch(/^Halt at/);
  });
});
