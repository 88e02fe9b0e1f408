// Measurement, not a test (not collected by `npm test`; run with MESH_MEASURE=1 and MESH_MEASURE_REPORTS=1, Postgres only): N changed reports
// (one per node, as after a fleet-wide change) stored one transaction per report, the old way (in
// sequence, and all at once through the pool as the gateway's links did), then through the ReportBatcher.
// Prints reports per second. Figures go to the report-batch decision note.
// With MESH_MEASURE=1 writeReports times its statements (batching/statement-times.ts): printed per batch statement.
// MEASURE_BODIES=shared (default: every host reports the same owned list, as after a fleet-wide change)
// or distinct (every host's digests differ: the worst case for bodies stored by hash).
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_REPORTS=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        MEASURE_REPORTS=2000 npx vitest run src/services/report-batch.measure.test.ts
import { describe, expect, it } from "vitest";
import pino from "pino";
import { createDb } from "@mesh/db";
import { migrate } from "@mesh/db/migrate";
import { createPostgresDatabase } from "@mesh/db/testing";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { ReportBatcher } from "./report-batch";
import { takeStatementTimes } from "../batching/statement-times";
import { countReportBodies, pruneReportBodies } from "./report-store";
import { recordReportOneByOne } from "../testing/report-oracle";
import { testReport } from "../testing/host-facts";
import { enrolWithToken } from "../testing/test-nodes";

const N = Number(process.env.MEASURE_REPORTS ?? 2000);
const run = process.env.MESH_MEASURE_REPORTS === "1" && !!process.env.DATABASE_URL;
/** MEASURE_BASELINE=0 skips the one-by-one runs (at 10,000 they take a minute). */
const baseline = process.env.MEASURE_BASELINE !== "0";
const distinct = process.env.MEASURE_BODIES === "distinct";

/** A host's report after a role change that placed 10 files: 10 owned resources, no drift (the same on every host unless distinct). */
const reportOf = (version: number, i: number): Report =>
  testReport(version, {
    owned: Array.from({ length: 10 }, (_, k) => ({
      id: `file:/etc/app/${k}.conf`,
      type: "file",
      path: `/etc/app/${k}.conf`,
      hash: ((distinct ? i : 0) + version + k).toString(16).padStart(64, "0"),
    })) as unknown as Report["owned"],
  });

describe.runIf(run)("report write throughput", () => {
  it(`stores ${N} changed reports one by one and in batches`, { timeout: 1_800_000 }, async () => {
    const pg = await createPostgresDatabase("mesh_measure");
    const database = await createDb({ url: pg.url });
    try {
      await migrate(database);
      const deps: Deps = { db: database.db, log: pino({ level: "silent" }) };
      const { token } = await createToken(deps, { actor: "measure", publicUrl: "http://cp", input: { maxUses: N } });
      const ids: string[] = [];
      for (let i = 0; i < N; i += 20) {
        const chunk = await Promise.all(Array.from({ length: Math.min(20, N - i) }, () => enrolWithToken(deps, token)));
        ids.push(...chunk.map((c) => c.nodeId));
      }
      const figures: Array<{ how: string; seconds: number; perSecond: number }> = [];
      const measure = async (how: string, fn: () => Promise<unknown>) => {
        const t0 = performance.now();
        await fn();
        const seconds = (performance.now() - t0) / 1000;
        figures.push({ how, seconds: Number(seconds.toFixed(2)), perSecond: Math.round(N / seconds) });
      };
      let version = 1;
      if (baseline)
        await measure("one transaction per report, in sequence", async () => {
          version++;
          for (const [i, id] of ids.entries()) expect(await recordReportOneByOne(deps, id, reportOf(version, i))).toBe(true);
        });
      if (baseline)
        await measure("one transaction per report, all at once (the pool)", async () => {
          version++;
          await Promise.all(ids.map((id, i) => recordReportOneByOne(deps, id, reportOf(version, i))));
        });
      const batcher = new ReportBatcher(deps);
      takeStatementTimes();
      await measure("ReportBatcher, all at once", async () => {
        version++;
        const written = await Promise.all(ids.map((id, i) => batcher.write({ nodeId: id, report: reportOf(version, i) })));
        expect(written.every(Boolean)).toBe(true);
      });
      const batches = batcher.batches;
      const statements = takeStatementTimes();
      await measure("ReportBatcher, all unchanged (one read per batch)", async () => {
        await Promise.all(ids.map((id, i) => batcher.write({ nodeId: id, report: reportOf(version, i) })));
      });
      console.table(figures);
      console.log(
        `${N} reports (${distinct ? "distinct" : "shared"} bodies), ${batches} transactions through the batcher; per batch statement (changed reports):`,
      );
      console.table(statements);
      // The body sweep over this database (N latest rows, the history's rows; every body named: it deletes none).
      const t0 = performance.now();
      await pruneReportBodies(deps.db);
      console.log(`${await countReportBodies(deps.db)} report bodies stored; a sweep took ${(performance.now() - t0).toFixed(1)} ms`);
    } finally {
      await database.close();
      await pg.drop();
    }
  });
});
