import { describe, expect, it } from "vitest";
import { EventBudget } from "./event-budget";

describe("EventBudget", () => {
  it("gives a few slots per window per key, counts what it leaves out and tells it in the next slot", () => {
    let now = 0;
    const budget = new EventBudget(2, 1000, () => now);
    expect(budget.take("a")).toEqual({ suppressed: 0 });
    expect(budget.take("a")).toEqual({ suppressed: 0 });
    expect(budget.take("a")).toBeNull();
    expect(budget.take("a")).toBeNull();
    expect(budget.take("b")).toEqual({ suppressed: 0 });
    now = 1000;
    expect(budget.take("a")).toEqual({ suppressed: 2 });
    expect(budget.take("a")).toEqual({ suppressed: 0 });
  });
});
