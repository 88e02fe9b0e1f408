// Report bodies stored by content hash (issue 11): one body for every host that reports the same
// thing, each report given back exactly as sent, unnamed bodies swept, and a body a writer is naming
// never swept from under it.
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { nodes, reportBodies } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import { Report as ReportSchema, type Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { REPORT_HISTORY_PER_NODE, ReportBatcher, reportHash, writeReports } from "./report-batch";
import { countReportBodies, insertReportRows, latestReport, pruneReportBodies, reportBody, reportHistoryOf, storeReportBodies } from "./report-store";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

const sha = (n: number) => n.toString(16).padStart(64, "0");
/** What a host says after placing `files` files: the same on every host that placed them. */
const said = (files: number): Omit<Report, "declarationVersion" | "reconciledAt"> => ({
  owned: Array.from({ length: files }, (_, k) => ({ id: `file:/etc/app/${k}.conf`, type: "file" as const, digest: sha(k) })),
  drift: [],
  errors: [],
  skipped: [],
  storeLost: false,
});

describe("report body names", () => {
  it("are the same for hosts that say the same thing, whatever the key order they sent (a parsed report's is the schema's)", () => {
    const owned = [{ id: "f1", type: "file", digest: sha(1) }];
    const one = ReportSchema.parse({
      declarationVersion: 1,
      owned,
      drift: [],
      errors: [],
      skipped: [],
      storeLost: false,
      reconciledAt: new Date().toISOString(),
      storeGeneration: 3,
    });
    const two = ReportSchema.parse({
      reconciledAt: new Date(0).toISOString(),
      storeLost: false,
      errors: [],
      drift: [],
      owned: [{ digest: sha(1), type: "file", id: "f1" }],
      declarationVersion: 7,
    });
    expect(reportBody(two).hash).toBe(reportBody(one).hash);
    expect(reportBody({ ...one, storeLost: true }).hash).not.toBe(reportBody(one).hash);
  });
});

describe.each(testEngines())("report store (%s)", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = async (n: number) => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses: n } });
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(
        (await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() })).nodeId,
      );
    return ids;
  };

  it("stores one body for hosts that report the same thing, and gives back each report as it was sent", async () => {
    const ids = await enrol(3);
    const before = await countReportBodies(deps.db);
    // Their own parts differ: version, time, origin, store generation (one host is older and sends neither of the last two).
    const reports: Report[] = ids.map((_, i) => ({
      ...said(10),
      declarationVersion: 3 + i,
      reconciledAt: new Date(Date.UTC(2026, 11, 3, 12, 0, i, 7)).toISOString(),
      ...(i < 2 ? { origin: { stream: "ab".repeat(8), sequence: i }, storeGeneration: 10 + i } : {}),
    }));
    const written = await deps.db.transaction((tx) =>
      writeReports(
        tx,
        ids.map((nodeId, i) => ({ nodeId, report: reports[i]! })),
      ),
    );
    expect(written).toEqual([true, true, true]);
    expect(await countReportBodies(deps.db)).toBe(before + 1);
    for (const [i, nodeId] of ids.entries()) {
      const latest = await latestReport(deps.db, nodeId);
      expect(latest!.report).toEqual(reports[i]);
      expect(latest!.hash).toBe(reportHash(reports[i]!));
    }
    expect((await reportHistoryOf(deps.db, ids)).map((h) => h.report)).toEqual(reports);
    // Another body is another row; the same again is none.
    await deps.db.transaction((tx) =>
      writeReports(tx, [{ nodeId: ids[0]!, report: { ...reports[0]!, ...said(2), declarationVersion: 9, origin: { stream: "ab".repeat(8), sequence: 5 } } }]),
    );
    await deps.db.transaction((tx) =>
      writeReports(tx, [{ nodeId: ids[1]!, report: { ...reports[1]!, ...said(2), declarationVersion: 9, origin: { stream: "ab".repeat(8), sequence: 6 } } }]),
    );
    expect(await countReportBodies(deps.db)).toBe(before + 2);
    expect(await latestReport(deps.db, crypto.randomUUID())).toBeNull();
  });

  it("sweeps the bodies no report names any more (a history scrolled past them, a node deleted), and only those", async () => {
    const [scrolled, deleted] = await enrol(2);
    const report = (files: number, version: number): Report => ({
      ...said(files),
      drift: [{ id: `file:/x${files}`, type: "file", declared: sha(1), observed: null, description: "gone", corrected: false }],
      declarationVersion: version,
      reconciledAt: new Date().toISOString(),
    });
    const write = (nodeId: string, r: Report) => deps.db.transaction((tx) => writeReports(tx, [{ nodeId, report: r }]));
    await pruneReportBodies(deps.db);
    const start = await countReportBodies(deps.db);
    // Body 100 is named once, then REPORT_HISTORY_PER_NODE other bodies push it out of the history.
    await write(scrolled!, report(100, 1));
    for (let k = 0; k < REPORT_HISTORY_PER_NODE; k++) await write(scrolled!, report(200 + k, 2 + k));
    await write(deleted!, report(300, 1));
    expect(await countReportBodies(deps.db)).toBe(start + REPORT_HISTORY_PER_NODE + 2);
    expect(await pruneReportBodies(deps.db)).toBe(1);
    const gone = reportBody(report(100, 1)).hash;
    expect(await deps.db.select().from(reportBodies).where(eq(reportBodies.hash, gone))).toEqual([]);
    await deps.db.delete(nodes).where(eq(nodes.id, deleted!));
    expect(await pruneReportBodies(deps.db)).toBe(1);
    expect(await countReportBodies(deps.db)).toBe(start + REPORT_HISTORY_PER_NODE);
    // Every report still named reads back whole.
    expect((await latestReport(deps.db, scrolled!))!.report.declarationVersion).toBe(1 + REPORT_HISTORY_PER_NODE);
    expect(await reportHistoryOf(deps.db, [scrolled!])).toHaveLength(REPORT_HISTORY_PER_NODE);
    expect(await pruneReportBodies(deps.db)).toBe(0);
  });

  it("the report batcher sweeps after a batch, at most once per bodySweepMs", async () => {
    const [nodeId] = await enrol(1);
    const orphan = reportBody({ ...said(3), declarationVersion: 0, reconciledAt: new Date().toISOString() });
    const plant = () =>
      deps.db
        .insert(reportBodies)
        .values({ hash: orphan.hash, body: JSON.parse(orphan.json) })
        .onConflictDoNothing();
    const present = async () => (await deps.db.select().from(reportBodies).where(eq(reportBodies.hash, orphan.hash))).length;
    const write = (batcher: ReportBatcher, version: number) =>
      batcher.write({ nodeId: nodeId!, report: { ...said(1), declarationVersion: version, reconciledAt: new Date().toISOString() } });
    await plant();
    const every = new ReportBatcher(deps, { windowMs: 1, bodySweepMs: 0 });
    await write(every, 1);
    await every.flush();
    expect(await present()).toBe(0);
    await plant();
    const seldom = new ReportBatcher(deps, { windowMs: 1 });
    await write(seldom, 2);
    await seldom.flush();
    expect(await present()).toBe(1);
  });

  it.runIf(engine === "postgres")("never sweeps a body a writer is naming: the sweep skips it while the writer's transaction is open", async () => {
    const [nodeId] = await enrol(1);
    const report: Report = { ...said(7), declarationVersion: 1, reconciledAt: new Date().toISOString() };
    const body = reportBody(report);
    // Stored before and named by nothing (its last report scrolled away): what the sweep deletes.
    await deps.db
      .insert(reportBodies)
      .values({ hash: body.hash, body: JSON.parse(body.json) })
      .onConflictDoNothing();
    let named!: () => void;
    const bodyHeld = new Promise<void>((resolve) => (named = resolve));
    let go!: () => void;
    const swept = new Promise<void>((resolve) => (go = resolve));
    const writer = deps.db.transaction(async (tx) => {
      const rows = [{ i: 0, nodeId: nodeId!, report, hash: reportHash(report), body }];
      await storeReportBodies(tx, rows);
      named();
      await swept;
      await insertReportRows(tx, rows);
    });
    await bodyHeld;
    // (Other tests' unnamed bodies may go: this one must not.)
    await pruneReportBodies(deps.db).finally(go);
    expect(await deps.db.select({ hash: reportBodies.hash }).from(reportBodies).where(eq(reportBodies.hash, body.hash))).toHaveLength(1);
    await writer;
    expect((await latestReport(deps.db, nodeId!))!.report).toEqual(report);
  });
});
