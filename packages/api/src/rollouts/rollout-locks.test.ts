// Lock order of the rollout paths against real Postgres: a staged save and a rollback lock the fleet's
// rows in id order (as the presence and report batches do) before pinning, and a role's deletion takes
// the compiler lock before the rollout rows (as a wave release does). Postgres only: PGlite has one
// connection, so nothing there runs concurrently.
import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { rollouts } from "@mesh/db";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { useServiceDeps } from "../testing/service-deps";
import { deleteRole, upsertRole } from "../services/roles";
import { writeReports } from "../services/report-batch";
import { writeTransitions } from "../services/presence-batch";
import { touchLastChecked } from "../services/presence";
import { lockCompiler } from "../services/recompile-node";
import { rollbackRollout } from "./rollout-actions";
import { testReport } from "../testing/host-facts";
import { insertTestNodes } from "../testing/node-rows";

describe.skipIf(!process.env.DATABASE_URL)("rollout lock order on postgres", () => {
  let deps: Deps;
  useServiceDeps("postgres", (d) => (deps = d));
  const staged = { mode: "staged" as const, canary: { count: 3 }, waves: { size: 5 }, waveTimeoutSeconds: 60 };
  const motd = (content: string) => [{ type: "file" as const, id: "motd", path: "/etc/motd", content }];
  const makeNodes = (g: string, n: number) => insertTestNodes(deps, g, n);

  it("staged saves and rollbacks run with presence and report batches, many times, without a deadlock", async () => {
    const ids = await makeNodes("locks", 40);
    const shuffled = () => [...ids].sort(() => Math.random() - 0.5);
    const report = (round: number): Report => testReport(round);
    const save = (round: number) =>
      upsertRole(deps, {
        actor: "test",
        input: { name: "locks", selector: { labels: { group: "locks" } }, resources: motd(`round ${round}\n`) },
        rollout: staged,
      });
    await upsertRole(deps, { actor: "test", input: { name: "locks", selector: { labels: { group: "locks" } }, resources: motd("round 0\n") } });
    for (let round = 1; round <= 12; round++) {
      const order = shuffled();
      // Odd rounds save (a staged rollout), even rounds roll the last one back.
      const last =
        round % 2 === 0
          ? (
              await deps.db.select({ id: rollouts.id }).from(rollouts).where(eq(rollouts.roleName, "locks")).orderBy(sql`${rollouts.createdAt} desc`).limit(1)
            )[0]
          : undefined;
      const change = last ? rollbackRollout(deps, { actor: "test", id: last.id }) : save(round);
      const results = await Promise.all([
        change,
        deps.db.transaction((tx) =>
          writeReports(
            tx,
            order.slice(0, 25).map((nodeId) => ({ nodeId, report: report(round) })),
          ),
        ),
        deps.db.transaction((tx) =>
          writeReports(
            tx,
            order.slice(15).map((nodeId) => ({ nodeId, report: report(round) })),
          ),
        ),
        writeTransitions(
          deps,
          "gw-a",
          order.slice(20).map((nodeId) => ({ nodeId, hostVersion: "0.1.0", linkId: `a${round}` })),
          [],
        ),
        touchLastChecked(deps, [...order].reverse()),
      ]);
      expect(results[0]).toBeTruthy();
    }
  });

  it("a role's deletion waits for the compiler lock before it touches its rollouts (a release holds it, then the rollout row)", async () => {
    await makeNodes("del", 4);
    await upsertRole(deps, { actor: "test", input: { name: "del", selector: { labels: { group: "del" } }, resources: motd("one\n") } });
    const saved = await upsertRole(deps, {
      actor: "test",
      input: { name: "del", selector: { labels: { group: "del" } }, resources: motd("two\n") },
      rollout: staged,
    });
    const rolloutId = saved.rollout!.id;
    // A wave release's order (advance.ts releaseWave): the compiler lock, then the rollout row.
    let deletion: Promise<unknown> | undefined;
    await deps.db.transaction(async (tx) => {
      await lockCompiler(tx);
      deletion = deleteRole(deps, { actor: "test", name: "del" });
      deletion.catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
      await tx.select().from(rollouts).where(eq(rollouts.id, rolloutId)).for("update");
    });
    await expect(deletion).resolves.toBeTruthy();
    expect((await deps.db.select().from(rollouts).where(eq(rollouts.id, rolloutId)))[0]!.state).toBe("superseded");
  });

  it("the rollout tables' foreign keys carry drizzle's names (migration 0019 as the snapshot says)", async () => {
    const rows = await deps.db.execute(
      sql`select conname from pg_constraint where contype = 'f' and conrelid in ('role_pins'::regclass, 'rollout_nodes'::regclass) order by conname`,
    );
    const names = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows).map((r) => (r as { conname: string }).conname);
    expect(names).toEqual([
      "role_pins_node_id_nodes_id_fk",
      "role_pins_rollout_id_rollouts_id_fk",
      "rollout_nodes_node_id_nodes_id_fk",
      "rollout_nodes_rollout_id_rollouts_id_fk",
    ]);
  });
});
