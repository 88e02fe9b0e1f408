import { describe, expect, it } from "vitest";
import { isLive, NODE_STATES, NodeState } from "./node-state";

describe("node states", () => {
  it("a node is live (in service) when enrolled or disconnected, and in no other state", () => {
    expect(NODE_STATES.filter(isLive)).toEqual(["enrolled", "disconnected"]);
    expect(isLive("unknown")).toBe(false);
  });

  it("are the six of the lifecycle, and nothing else parses as one", () => {
    expect(NODE_STATES).toEqual(["pending", "enrolled", "disconnected", "retiring", "retired", "revoked"]);
    expect(NodeState.safeParse("Enrolled").success).toBe(false);
  });
});
