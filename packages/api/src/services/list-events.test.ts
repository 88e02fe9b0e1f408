// The audit trail's filter (actor, action, node, time range), a host's events named by its node,
// and the CSV export: same filter, quoted cells, formula-looking cells defused, a bounded size.
import { describe, expect, it } from "vitest";
import { events } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { exportEvents, listEvents } from "./list-events";
import { recordEvent } from "./record-event";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

describe.each(testEngines())("audit trail on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  it("filters by a time range and names a host's own events by its node", async () => {
    const { token } = await createToken(deps, { actor: "user:admin", publicUrl: "http://cp", input: {} });
    const { nodeId } = await enrolNode(deps, {
      token,
      publicKey: testKeyPair().publicKey,
      profile: testProfile(crypto.randomUUID()),
      inventory: emptyInventory(),
    });
    await deps.db.insert(events).values([
      { actor: "user:old", action: "role.upsert", at: new Date("2026-01-01T00:00:00Z"), data: {} },
      { actor: `node:${nodeId}`, action: "node.facts", nodeId, at: new Date("2026-06-01T00:00:00Z"), data: {} },
      { actor: "node:not-a-uuid", action: "odd", at: new Date("2026-06-02T00:00:00Z"), data: {} },
    ]);
    const june = await listEvents(deps, { since: "2026-05-01T00:00:00Z", until: "2026-07-01T00:00:00Z" });
    expect(june.items.map((e) => e.action).sort()).toEqual(["node.facts", "odd"]);
    const own = june.items.find((e) => e.action === "node.facts")!;
    expect(own.actor).toBe(`node:${nodeId}`);
    expect(own.actorName).toMatch(/\S/);
    expect(june.items.find((e) => e.action === "odd")!.actorName).toBeNull();
    expect((await listEvents(deps, { until: "2026-02-01T00:00:00Z" })).items.map((e) => e.actor)).toEqual(["user:old"]);
  });

  it("refuses a range whose start is not before its end, and a malformed instant", async () => {
    await expect(listEvents(deps, { since: "2026-07-01T00:00:00Z", until: "2026-06-01T00:00:00Z" })).rejects.toThrow(/start must be before its end/);
    await expect(listEvents(deps, { since: "yesterday" })).rejects.toThrow();
    await expect(exportEvents(deps, { actor: "x".repeat(129) })).rejects.toThrow();
  });

  it("exports the filtered trail as CSV with every cell quoted and formulas defused", async () => {
    await recordEvent(deps.db, { actor: "user:eve", action: "role.upsert", data: { name: '=HYPERLINK("x")', note: 'say "hi"' } });
    await recordEvent(deps.db, { actor: "user:bob", action: "role.delete", data: {} });
    const { csv, rows, truncated } = await exportEvents(deps, { actor: "user:eve" });
    expect(rows).toBe(1);
    expect(truncated).toBe(false);
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe('"id","at","actor","actor_name","action","node_id","node_name","target","result","data"');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('"user:eve"');
    expect(lines[1]).toContain('"role.upsert"');
    // JSON data cell: quotes doubled; it starts with { so it is not a formula.
    expect(lines[1]).toContain('"{""name"":""=HYPERLINK(\\""x\\"")""');
    await recordEvent(deps.db, { actor: "=cmd|' /C calc'!A0", action: "odd", data: {} });
    const formula = await exportEvents(deps, { action: "odd" });
    expect(formula.csv).toContain(`"'=cmd|' /C calc'!A0"`);
    expect(formula.csv).not.toMatch(/(^|,)"=/m);
  });
});
