// Crash safety for real: mesh-host apply of 200 files, directories and symlinks,
// SIGKILLed at random instants and at every named fail point, then restarted and checked.
import { describe, expect, it } from "vitest";
import { runChaos } from "../harness/chaos";

describe("chaos: kill -9 during apply", () => {
  it("after every kill and restart: the store parses, nothing orphaned, nothing lost, a second apply changes nothing", async () => {
    const seed = Number(process.env.MESH_CHAOS_SEED ?? Date.now() % 100_000);
    const stats = await runChaos(Number(process.env.MESH_CHAOS_KILLS ?? 28), { seed });
    console.log(
      `chaos (seed ${seed}): ${stats.recovered}/${stats.kills} kills recovered (${stats.randomKills} at random instants; at fail points: ` +
        `${Object.entries(stats.failpointKills)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")}), ` +
        `${stats.orphans} orphans, ${stats.lostRecords} lost records, ${(stats.ms / 1000).toFixed(1)} s`,
    );
    expect(stats.problems.slice(0, 10)).toEqual([]);
    expect(stats.kills).toBeGreaterThanOrEqual(25);
    expect(Object.keys(stats.failpointKills).sort()).toEqual([
      "applied-before-record",
      "intent-written",
      "intents-resolved",
      "record-written",
      "remove-before-record",
      "snapshot-written",
      "temp-written",
    ]);
    expect(stats.orphans).toBe(0);
    expect(stats.lostRecords).toBe(0);
    // ~25 s on two idle cores; room for a busy machine.
  }, 240_000);
});
