// Reports stored in batches leave exactly the rows that storing them one by one leaves: the old
// per-report recordReport (kept as the oracle in testing/report-oracle.ts) against writeReports and the ReportBatcher,
// over random batches (several nodes, drift, repeats, store lost turning on and off, carried drift,
// spent budgets, more than REPORT_HISTORY_PER_NODE reports per node, several reports of a node in one batch).
import { describe, expect, it } from "vitest";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { events, latestReports, nodes } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Drift, Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { upsertRole } from "./roles";
import { touchLastChecked } from "./presence";
import { writeTransitions } from "./presence-batch";
import { recordReport } from "./record-report";
import { REPORT_HISTORY_PER_NODE, ReportBatcher, writeReports, type RecordReportOptions, type ReportItem } from "./report-batch";
import { recordReportOneByOne } from "../testing/report-oracle";
import { latestReport, reportHistoryOf } from "./report-store";
import { testReport } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { enrolNodesOneByOne } from "../testing/test-nodes";

/** A small seeded generator, so a failing case can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)]! };
}

const sha = (n: number) => n.toString(16).padStart(64, "0");
const drift = (n: number, tag: string): Drift[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `${tag}${i}`,
    type: "file" as const,
    declared: sha(i),
    observed: sha(i + 1),
    description: `differs ${tag}`,
    corrected: i % 2 === 0,
  }));

/** One planned report of logical node `node`, written alike to both fleets. */
interface Step {
  node: number;
  report: Report;
  opts: Omit<RecordReportOptions, "storeLostEvent">;
  budget: boolean;
}

/** Few distinct states, so repeats (unchanged reports) are common; every option a gateway passes varies. */
function plan(rng: ReturnType<typeof random>, nodeCount: number, length: number, clock: { t: number }): Step[] {
  return Array.from({ length }, () => {
    const report: Report = {
      declarationVersion: rng.int(4),
      owned: rng.next() < 0.5 ? [] : ([{ id: "f", type: "file", path: "/f" }] as unknown as Report["owned"]),
      drift: drift(rng.pick([0, 0, 1, 3]), "d"),
      errors: rng.next() < 0.8 ? [] : [{ id: null, message: "boom" }],
      skipped: [],
      storeLost: rng.next() < 0.3,
      reconciledAt: new Date(++clock.t).toISOString(),
    };
    const opts: Step["opts"] = {};
    if (rng.next() < 0.2) opts.carriedDrift = drift(1 + rng.int(2), "c");
    if (rng.next() < 0.2) opts.driftEvent = false;
    if (rng.next() < 0.3) opts.suppressedDriftEvents = rng.int(3);
    return { node: rng.int(nodeCount), report, opts, budget: rng.next() < 0.5 };
  });
}

/** A per-node store-lost budget with a fixed pattern: both fleets call it in the same order if they behave alike. */
function budgets() {
  const calls = new Map<number, number>();
  return (node: number) => () => {
    const n = calls.get(node) ?? 0;
    calls.set(node, n + 1);
    return n % 3 === 2 ? null : { suppressed: n % 2 };
  };
}

describe.each(testEngines())("reports stored in batches on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const enrol = (count: number) => enrolNodesOneByOne(deps, count);

  /** Everything a report write leaves about these nodes, with node ids replaced by their index. */
  const rowsOf = async (ids: string[]) => {
    const index = new Map(ids.map((id, i) => [id, i]));
    const latest = (await Promise.all(ids.map(async (nodeId) => ({ nodeId, stored: await latestReport(deps.db, nodeId) })))).flatMap(({ nodeId, stored }) =>
      stored ? [{ nodeId, declarationVersion: stored.report.declarationVersion, hash: stored.hash, body: stored.report }] : [],
    );
    const history = (await reportHistoryOf(deps.db, ids)).map((h) => ({
      nodeId: h.nodeId,
      declarationVersion: h.report.declarationVersion,
      hash: h.hash,
      body: h.report,
    }));
    const figures = await deps.db.select().from(nodes).where(inArray(nodes.id, ids));
    const audit = await deps.db
      .select()
      .from(events)
      .where(and(inArray(events.nodeId, ids), inArray(events.action, ["node.drift", "node.store-lost"])))
      .orderBy(asc(events.id));
    return {
      latest: latest.map((r) => ({ node: index.get(r.nodeId), version: r.declarationVersion, hash: r.hash, body: r.body })).sort((a, b) => a.node! - b.node!),
      history: ids.map((id) => history.filter((h) => h.nodeId === id).map((h) => ({ version: h.declarationVersion, hash: h.hash, body: h.body }))),
      nodes: figures
        .map((n) => ({
          node: index.get(n.id),
          applied: n.appliedVersion,
          owned: n.ownedCount,
          drift: n.driftCount,
          errors: n.errorCount,
          storeLost: n.storeLost,
          checked: n.lastCheckedAt !== null,
        }))
        .sort((a, b) => a.node! - b.node!),
      events: audit.map((e) => ({
        node: index.get(e.nodeId!),
        actor: e.actor.replace(e.nodeId!, "N"),
        action: e.action,
        result: e.result,
        target: e.target,
        data: e.data,
      })),
    };
  };

  for (const seed of [1, 2, 3]) {
    it(`leaves the same rows as one-by-one writes (seed ${seed})`, async () => {
      const rng = random(seed);
      const nodeCount = 5;
      const oracle = await enrol(nodeCount);
      const batched = await enrol(nodeCount);
      const clock = { t: Date.UTC(2026, 0, 1) };
      const oracleBudget = budgets();
      const batchBudget = budgets();
      const oracleWritten: boolean[] = [];
      const batchWritten: boolean[] = [];
      // Enough rounds that every node passes REPORT_HISTORY_PER_NODE; a node may report several times in one batch.
      for (let round = 0; round < 8; round++) {
        const steps = plan(rng, nodeCount, 25, clock);
        for (const s of steps) {
          oracleWritten.push(
            await recordReportOneByOne(deps, oracle[s.node]!, s.report, { ...s.opts, ...(s.budget ? { storeLostEvent: oracleBudget(s.node) } : {}) }),
          );
        }
        const items: ReportItem[] = steps.map((s) => ({
          nodeId: batched[s.node]!,
          report: s.report,
          opts: { ...s.opts, ...(s.budget ? { storeLostEvent: batchBudget(s.node) } : {}) },
        }));
        if (round % 2 === 0) batchWritten.push(...(await deps.db.transaction((tx) => writeReports(tx, items))));
        else {
          // Through the batcher: one read for the unchanged ones, the rest in one transaction.
          const batcher = new ReportBatcher(deps, { windowMs: 5 });
          batchWritten.push(...(await Promise.all(items.map((item) => batcher.write(item)))));
        }
      }
      expect(batchWritten).toEqual(oracleWritten);
      expect(oracleWritten.filter((w) => !w).length).toBeGreaterThan(0);
      const expected = await rowsOf(oracle);
      expect(expected.history.every((h) => h.length === REPORT_HISTORY_PER_NODE)).toBe(true);
      expect(expected.events.some((e) => e.action === "node.store-lost")).toBe(true);
      expect(await rowsOf(batched)).toEqual(expected);
    });
  }

  it("stores batches while fleet recompiles, presence batches and the checked flush run, many times, without a deadlock", async () => {
    const ids = await enrolNodesOneByOne(deps, 40, { tier: "reporting" });
    const shuffled = () => [...ids].sort(() => Math.random() - 0.5);
    const report = (round: number, i: number): Report => testReport(round, { drift: drift(i % 3, `r${round}`), storeLost: i % 4 === round % 4 });
    for (let round = 1; round <= 12; round++) {
      const recompile = upsertRole(deps, {
        actor: "test",
        input: {
          name: "reporting",
          selector: { labels: { tier: "reporting" } },
          resources: [{ type: "file", id: "f", path: "/etc/reporting", content: `round ${round}\n` }],
        },
      });
      const order = shuffled();
      const results = await Promise.all([
        recompile,
        deps.db.transaction((tx) =>
          writeReports(
            tx,
            order.slice(0, 25).map((nodeId, i) => ({ nodeId, report: report(round, i) })),
          ),
        ),
        deps.db.transaction((tx) =>
          writeReports(
            tx,
            order.slice(15).map((nodeId, i) => ({ nodeId, report: report(round, i + 1) })),
          ),
        ),
        ...order.slice(0, 3).map((nodeId, i) => recordReport(deps, nodeId, report(round, i + 2))),
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
    const [stored] = await deps.db.select({ n: sql<number>`count(*)::int` }).from(latestReports).where(inArray(latestReports.nodeId, ids));
    expect(stored!.n).toBe(40);
  });

  it("writes nothing for a node that is gone, and the rest of its batch all the same", async () => {
    const [nodeId] = await enrol(1);
    const report: Report = testReport(1);
    const written = await deps.db.transaction((tx) =>
      writeReports(tx, [
        { nodeId: crypto.randomUUID(), report },
        { nodeId: nodeId!, report },
      ]),
    );
    expect(written).toEqual([false, true]);
  });

  it("finds stores rolled back among a batch's nodes with the batch's own statements, several reports of a node in order", async () => {
    const [a, b, c] = await enrol(3);
    const report = (storeGeneration: number, storeLost = false): Report => ({
      declarationVersion: 1,
      owned: [],
      drift: [],
      errors: [],
      skipped: [],
      storeLost,
      storeGeneration,
      reconciledAt: new Date().toISOString(),
    });
    await deps.db.transaction((tx) =>
      writeReports(tx, [
        { nodeId: a!, report: report(5) },
        { nodeId: b!, report: report(5) },
        { nodeId: c!, report: report(5) },
      ]),
    );
    const behind: string[] = [];
    const item = (nodeId: string, r: Report) => ({ nodeId, report: r, opts: { storeBehind: (g: number) => behind.push(`${nodeId}@${g}`) } });
    // a: a restored backup; b: moves on; c: rolled back, then (in the same batch) lost and started again.
    await deps.db.transaction((tx) => writeReports(tx, [item(a!, report(2)), item(b!, report(8)), item(c!, report(3)), item(c!, report(6, true))]));
    expect(behind.sort()).toEqual([`${a}@5`, `${c}@5`].sort());
    const rows = await deps.db
      .select({ id: nodes.id, lost: nodes.storeLost, generation: nodes.storeGeneration })
      .from(nodes)
      .where(inArray(nodes.id, [a!, b!, c!]));
    expect(Object.fromEntries(rows.map((r) => [r.id, [r.lost, r.generation]]))).toEqual({ [a!]: [true, 5], [b!]: [false, 8], [c!]: [true, 6] });
    const lostEvents = await deps.db
      .select()
      .from(events)
      .where(and(inArray(events.nodeId, [a!, b!, c!]), eq(events.action, "node.store-lost")));
    expect(lostEvents.map((e) => [e.nodeId, e.data]).sort()).toEqual(
      [
        [a, { rolledBack: { storeGeneration: 2, acknowledged: 5 } }],
        [c, { rolledBack: { storeGeneration: 3, acknowledged: 5 } }],
      ].sort(),
    );
  });

  it("compares the reports of a batch found stored by their origin with the generation stored; only the flag of such a node changes", async () => {
    const [a, b, c, d] = await enrol(4);
    const stream = "ab".repeat(8);
    const sent = (sequence: number, storeGeneration: number, tag = ""): Report =>
      testReport(1, { drift: drift(tag ? 2 : 0, tag), storeGeneration, origin: { stream, sequence } });
    await deps.db.transaction((tx) =>
      writeReports(
        tx,
        [a!, b!, c!, d!].flatMap((nodeId) => [
          { nodeId, report: sent(19, 6) },
          { nodeId, report: sent(20, 7) },
        ]),
      ),
    );
    const behind: string[] = [];
    const item = (nodeId: string, r: Report) => ({ nodeId, report: r, opts: { storeBehind: (g: number) => behind.push(`${nodeId}@${g}`) } });
    // a: restored to 3, sends seq 20 again; b: the same, then a report it made since (still carrying 3);
    // c: sends 19 and 20 again as they were; d: restored, sends 19 again (older by right) then 20.
    const written = await deps.db.transaction((tx) =>
      writeReports(tx, [
        item(a!, sent(20, 3)),
        item(b!, sent(20, 3)),
        item(b!, sent(21, 3, "new")),
        item(c!, sent(19, 6)),
        item(c!, sent(20, 7)),
        item(d!, sent(19, 3)),
        item(d!, sent(20, 3)),
      ]),
    );
    expect(written).toEqual([false, false, true, false, false, false, false]);
    expect(behind.sort()).toEqual([`${a}@7`, `${b}@7`, `${b}@7`, `${d}@7`].sort());
    const rows = await deps.db
      .select({ id: nodes.id, lost: nodes.storeLost, generation: nodes.storeGeneration, drift: nodes.driftCount })
      .from(nodes)
      .where(inArray(nodes.id, [a!, b!, c!, d!]));
    expect(Object.fromEntries(rows.map((r) => [r.id, [r.lost, r.generation, r.drift]]))).toEqual({
      [a!]: [true, 7, 0],
      [b!]: [true, 7, 1],
      [c!]: [false, 7, 0],
      [d!]: [true, 7, 0],
    });
    const lostEvents = await deps.db
      .select()
      .from(events)
      .where(and(inArray(events.nodeId, [a!, b!, c!, d!]), eq(events.action, "node.store-lost")));
    expect(lostEvents.map((e) => [e.nodeId, e.data]).sort()).toEqual([a, b, d].map((n) => [n, { rolledBack: { storeGeneration: 3, acknowledged: 7 } }]).sort());
  });

  it("stores a batch of reports in one transaction and answers each caller", async () => {
    const ids = await enrol(30);
    const batcher = new ReportBatcher(deps, { windowMs: 20 });
    const report = (v: number): Report => testReport(v);
    expect(await Promise.all(ids.map((nodeId) => batcher.write({ nodeId, report: report(1) })))).toEqual(ids.map(() => true));
    expect(batcher.batches).toBe(1);
    const xmins = await deps.db
      .select({ xmin: sql<string>`${latestReports}.xmin::text` })
      .from(latestReports)
      .where(inArray(latestReports.nodeId, ids));
    expect(new Set(xmins.map((x) => x.xmin)).size).toBe(1);
    // The same reports again: found unchanged with one read, no transaction.
    expect(await Promise.all(ids.map((nodeId) => batcher.write({ nodeId, report: report(1) })))).toEqual(ids.map(() => false));
    expect(batcher.batches).toBe(1);
  });

  it("reads no stored hashes first for reports known changed; a wrong hint still writes nothing twice", async () => {
    const ids = await enrol(20);
    const batcher = new ReportBatcher(deps, { windowMs: 20 });
    const report = (v: number): Report => testReport(v);
    // Unknown (a link's first report): read first, as before.
    expect(await Promise.all(ids.map((nodeId) => batcher.write({ nodeId, report: report(1) })))).toEqual(ids.map(() => true));
    expect([batcher.reads, batcher.batches]).toEqual([1, 1]);
    // Known changed (a fleet answering a change): straight to the transaction.
    expect(await Promise.all(ids.map((nodeId) => batcher.write({ nodeId, report: report(2), knownChanged: true })))).toEqual(ids.map(() => true));
    expect([batcher.reads, batcher.batches]).toEqual([1, 2]);
    expect((await latestReport(deps.db, ids[0]!))?.report.declarationVersion).toBe(2);
    // A wrong hint (equal to the stored report after all): the transaction compares again and writes nothing.
    const before = await deps.db
      .select({ xmin: sql<string>`${latestReports}.xmin::text` })
      .from(latestReports)
      .where(inArray(latestReports.nodeId, ids));
    expect(await Promise.all(ids.map((nodeId) => batcher.write({ nodeId, report: report(2), knownChanged: true })))).toEqual(ids.map(() => false));
    expect([batcher.reads, batcher.batches]).toEqual([1, 3]);
    const after = await deps.db
      .select({ xmin: sql<string>`${latestReports}.xmin::text` })
      .from(latestReports)
      .where(inArray(latestReports.nodeId, ids));
    expect(after.map((x) => x.xmin).sort()).toEqual(before.map((x) => x.xmin).sort());
    expect((await reportHistoryOf(deps.db, [ids[0]!])).length).toBe(2);
  });

  it("writes a failed batch again after a pause, and fails its callers only after the last try", async () => {
    const ids = await enrol(3);
    const report: Report = testReport(1);
    // The database refuses the first `failing` transactions (a deadlock, a lost connection), then works.
    const flaky = (failing: number) => {
      let refused = 0;
      const db = new Proxy(deps.db, {
        get(target, prop, receiver) {
          if (prop === "transaction" && refused < failing) return async () => Promise.reject(new Error(`refused ${++refused}`));
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      return { db, log: deps.log };
    };
    const once = new ReportBatcher(flaky(1), { windowMs: 1 });
    expect(await Promise.all(ids.map((nodeId) => once.write({ nodeId, report })))).toEqual([true, true, true]);
    expect(once.batches).toBe(1);
    const always = new ReportBatcher(flaky(100), { windowMs: 1 });
    await expect(always.write({ nodeId: ids[0]!, report: { ...report, declarationVersion: 2 } })).rejects.toThrow("refused 3");
  });

  /** deps whose transactions start only after `holdMs` (a busy database), optionally refusing the first `failing`; counts those open at once. */
  const slowDb = (holdMs: number, failing = 0) => {
    let refused = 0;
    const seen = { open: 0, most: 0 };
    const db = new Proxy(deps.db, {
      get(target, prop, receiver) {
        if (prop === "transaction")
          return async (fn: Parameters<typeof target.transaction>[0]) => {
            seen.most = Math.max(seen.most, ++seen.open);
            try {
              await new Promise((r) => setTimeout(r, holdMs));
              if (refused < failing) throw new Error(`refused ${++refused}`);
              return await target.transaction(fn);
            } finally {
              seen.open--;
            }
          };
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { deps: { db, log: deps.log }, seen };
  };
  const versionsOf = async (nodeId: string) => ({
    latest: (await latestReport(deps.db, nodeId))?.report.declarationVersion,
    history: (await reportHistoryOf(deps.db, [nodeId])).map((h) => h.report.declarationVersion),
  });

  it("writes two batches at once on different nodes, and a node's later report only after its earlier one", async () => {
    const [a, b, c] = await enrol(3);
    const { deps: slow, seen } = slowDb(40);
    const batcher = new ReportBatcher(slow, { windowMs: 1, maxItems: 1 });
    // a's second report may not go with b's (its first is being written): it waits, then goes.
    const written = await Promise.all([
      batcher.write({ nodeId: a!, report: testReport(1) }),
      batcher.write({ nodeId: a!, report: testReport(2) }),
      batcher.write({ nodeId: b!, report: testReport(1) }),
      batcher.write({ nodeId: c!, report: testReport(1) }),
    ]);
    expect(written).toEqual([true, true, true, true]);
    expect([seen.most, batcher.batches]).toEqual([2, 4]);
    expect(await versionsOf(a!)).toEqual({ latest: 2, history: [1, 2] });
    // One at a time when asked: the batches of before this change.
    const serial = slowDb(10);
    const one = new ReportBatcher(serial.deps, { windowMs: 1, maxItems: 1, concurrency: 1 });
    await Promise.all([b!, c!].map((nodeId) => one.write({ nodeId, report: testReport(3) })));
    expect(serial.seen.most).toBe(1);
  });

  it("holds a node's later report while its earlier one waits to be retried", async () => {
    const [a, b] = await enrol(2);
    // The first transaction (a's first report) is refused; b's and a's second must not overtake it for a.
    const { deps: flaky } = slowDb(20, 1);
    const batcher = new ReportBatcher(flaky, { windowMs: 1, maxItems: 1 });
    const first = batcher.write({ nodeId: a!, report: testReport(1) });
    await new Promise((r) => setTimeout(r, 5));
    const later = [batcher.write({ nodeId: b!, report: testReport(1) }), batcher.write({ nodeId: a!, report: testReport(2) })];
    expect(await Promise.all([first, ...later])).toEqual([true, true, true]);
    expect(await versionsOf(a!)).toEqual({ latest: 2, history: [1, 2] });
    // flush() answers once nothing can be written: here, at once.
    await batcher.flush();
  });

  it("bounds a batch by bytes as well as by count; a report larger than the bound goes alone", async () => {
    const ids = await enrol(6);
    const report = (descriptionBytes: number): Report =>
      testReport(1, { drift: [{ id: "big", type: "file", declared: sha(1), observed: sha(2), description: "x".repeat(descriptionBytes), corrected: true }] });
    const batcher = new ReportBatcher(deps, { windowMs: 600_000, maxBytes: 2_000 });
    // 5 x ~700 bytes: two per batch; then one of ~3,000 alone.
    const written = await Promise.all([
      ...ids.slice(0, 5).map((nodeId) => batcher.write({ nodeId, report: report(400) })),
      batcher.write({ nodeId: ids[5]!, report: report(3_000) }),
    ]);
    expect(written).toEqual(ids.map(() => true));
    expect(batcher.batches).toBe(4);
  });
});
