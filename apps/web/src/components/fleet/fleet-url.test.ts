import { describe, expect, it } from "vitest";
import { NODE_STATES } from "@mesh/protocol";
import { DEFAULT_VIEW, viewErrors } from "./fleet-url";

describe("the fleet view's state filter", () => {
  it("takes every state the protocol defines, and says so of anything else", () => {
    for (const state of NODE_STATES) expect(viewErrors({ ...DEFAULT_VIEW, state }, [])).toEqual({});
    expect(viewErrors({ ...DEFAULT_VIEW, state: "online" }, [])).toEqual({ state: '"online" is not a state' });
  });
});
