// Reports stored by content hash (issue 11, decision 0028-report-bodies), as declarations are
// (declaration-store.ts): a report's body (what it says about the machine) is stored once in
// report_bodies; latest_reports and report_history are small rows naming it, with the report's own
// parts (declaration version, reconciled at, origin, store generation), which differ from host to host
// even when the machines are alike. Every read and write of reports goes through here.
//
// No foreign key names a body (its check would cost a lookup and a lock per row, 2,000 a batch); the
// writer locks the bodies it names instead (FOR KEY SHARE, once per distinct body a batch), and the
// sweep (pruneReportBodies) deletes only bodies it could lock and, with a fresh snapshot, found unnamed.
import { createHash } from "node:crypto";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { latestReports, nodes, reportBodies, reportHistory, type DbOrTx } from "@mesh/db";
import type { Report, ReportOrigin } from "@mesh/protocol";

/** What a report says about the machine: the same on every host that owns and sees the same. */
export type ReportBody = Omit<Report, "declarationVersion" | "reconciledAt" | "origin" | "storeGeneration">;

/**
 * A report's body as JSON text (the text stored), keys in the order the report has them: a parsed
 * report's are the schema's, the same on every host. Not canonical JSON: sorting every object's keys
 * of 1,000 bodies took most of a batch's time (0028-report-bodies). A body whose keys come in
 * another order gets another name, which costs a row, never a wrong answer: "unchanged" is decided by
 * reportHash, never by a body's name.
 */
export function reportBodyJson(report: Report): string {
  const { declarationVersion: _v, reconciledAt: _at, origin: _origin, storeGeneration: _g, ...body } = report;
  return JSON.stringify(body);
}

/** A report's body: its JSON text and that text's sha256 (its name). */
export function reportBody(report: Report, json = reportBodyJson(report)): { hash: string; json: string } {
  return { hash: createHash("sha256").update(json).digest("hex"), json };
}

/** The report as the host sent it, from its body and its row's own parts. */
function reportOf(body: unknown, row: { declarationVersion: number; reconciledAt: string; origin: unknown; storeGeneration: number | null }): Report {
  return {
    ...(body as ReportBody),
    declarationVersion: row.declarationVersion,
    reconciledAt: row.reconciledAt,
    ...(row.origin != null ? { origin: row.origin as ReportOrigin } : {}),
    ...(row.storeGeneration != null ? { storeGeneration: Number(row.storeGeneration) } : {}),
  };
}

const rowColumns = {
  declarationVersion: latestReports.declarationVersion,
  hash: latestReports.hash,
  reconciledAt: latestReports.reconciledAt,
  origin: latestReports.origin,
  storeGeneration: latestReports.storeGeneration,
  receivedAt: latestReports.receivedAt,
  body: reportBodies.body,
};

/** A node's latest report as it was sent, and when it was received; null before its first. */
export async function latestReport(db: DbOrTx, nodeId: string): Promise<{ report: Report; hash: string; receivedAt: Date } | null> {
  const [row] = await db
    .select(rowColumns)
    .from(latestReports)
    .innerJoin(reportBodies, eq(reportBodies.hash, latestReports.bodyHash))
    .where(eq(latestReports.nodeId, nodeId));
  return row ? { report: reportOf(row.body, row), hash: row.hash, receivedAt: row.receivedAt } : null;
}

/** These nodes' stored reports, oldest first (tests and tools: the history has no page yet). */
export async function reportHistoryOf(db: DbOrTx, nodeIds: string[]) {
  if (nodeIds.length === 0) return [];
  const rows = await db
    .select({
      id: reportHistory.id,
      nodeId: reportHistory.nodeId,
      bodyHash: reportHistory.bodyHash,
      declarationVersion: reportHistory.declarationVersion,
      hash: reportHistory.hash,
      reconciledAt: reportHistory.reconciledAt,
      origin: reportHistory.origin,
      storeGeneration: reportHistory.storeGeneration,
      receivedAt: reportHistory.receivedAt,
      body: reportBodies.body,
    })
    .from(reportHistory)
    .innerJoin(reportBodies, eq(reportBodies.hash, reportHistory.bodyHash))
    .where(inArray(reportHistory.nodeId, nodeIds))
    .orderBy(asc(reportHistory.id));
  return rows.map((r) => ({ id: r.id, nodeId: r.nodeId, hash: r.hash, bodyHash: r.bodyHash, receivedAt: r.receivedAt, report: reportOf(r.body, r) }));
}

/** What the report batch reads of each node under its lock: the node's store figures and its latest report's hashes. */
export async function lockNodesWithLatest(tx: DbOrTx, ids: string[]) {
  return tx
    .select({
      id: nodes.id,
      storeLost: nodes.storeLost,
      storeGeneration: nodes.storeGeneration,
      hash: latestReports.hash,
      bodyHash: latestReports.bodyHash,
      origin: sql<ReportOrigin | null>`${latestReports.origin}`,
    })
    .from(nodes)
    .leftJoin(latestReports, sql`${latestReports.nodeId} = ${nodes.id}`)
    .where(sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`)
    .orderBy(nodes.id)
    .for("update", { of: nodes });
}

/** The latest report's hash and the node's store generation, of each of these nodes that has one (no lock). */
export async function latestHashes(db: DbOrTx, ids: string[]) {
  return db
    .select({ nodeId: latestReports.nodeId, hash: latestReports.hash, generation: nodes.storeGeneration })
    .from(latestReports)
    .innerJoin(nodes, sql`${nodes.id} = ${latestReports.nodeId}`)
    .where(sql`${latestReports.nodeId} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`);
}

/** One report to store: its place in the batch, its node, its hashes and its body's JSON text. */
export interface ReportRow {
  i: number;
  nodeId: string;
  report: Report;
  hash: string;
  body: { hash: string; json: string };
}

/**
 * Stores the batch's reports: its distinct bodies in one statement (bodies stored already are locked
 * against the sweep, not written again), then one statement that inserts the history rows in the
 * batch's order and upserts each node's last into latest_reports.
 */
export async function storeReports(tx: DbOrTx, rows: ReportRow[]): Promise<void> {
  if (rows.length === 0) return;
  await storeReportBodies(tx, rows);
  await insertReportRows(tx, rows);
}

export async function storeReportBodies(tx: DbOrTx, rows: ReportRow[]): Promise<void> {
  const bodies = new Map<string, string>();
  for (const r of rows) if (!bodies.has(r.body.hash)) bodies.set(r.body.hash, `{"hash":${JSON.stringify(r.body.hash)},"body":${r.body.json}}`);
  // Held: a sweep deleting one waits for this transaction (and one the sweep holds is gone after it: inserted again).
  // Inserted in hash order: two batches written at once that bring the same new bodies wait for each
  // other in one order, never in a cycle (a deadlock).
  await tx.execute(sql`
    with v as (
      select * from jsonb_to_recordset(${`[${[...bodies.values()].join(",")}]`}::jsonb) as v(hash text, body jsonb)
    ), held as (
      select b.hash from report_bodies b where b.hash in (select hash from v) for key share
    )
    insert into report_bodies (hash, body)
    select v.hash, v.body from v where v.hash not in (select hash from held) order by v.hash
    on conflict (hash) do nothing`);
}

export async function insertReportRows(tx: DbOrTx, rows: ReportRow[]): Promise<void> {
  const json = JSON.stringify(
    rows.map((r) => ({
      i: r.i,
      node_id: r.nodeId,
      declaration_version: r.report.declarationVersion,
      hash: r.hash,
      body_hash: r.body.hash,
      reconciled_at: r.report.reconciledAt,
      origin: r.report.origin ?? null,
      store_generation: r.report.storeGeneration ?? null,
    })),
  );
  // History in the batch's order (ids ascend as one-by-one writes made them); latest: each node's last.
  await tx.execute(sql`
    with v as (
      select * from jsonb_to_recordset(${json}::jsonb)
        as v(i int, node_id uuid, declaration_version int, hash text, body_hash text, reconciled_at text, origin jsonb, store_generation bigint)
    ), history as (
      insert into report_history (node_id, declaration_version, hash, body_hash, reconciled_at, origin, store_generation)
      select node_id, declaration_version, hash, body_hash, reconciled_at, origin, store_generation from v order by i
    )
    insert into latest_reports (node_id, declaration_version, hash, body_hash, reconciled_at, origin, store_generation)
    select distinct on (node_id) node_id, declaration_version, hash, body_hash, reconciled_at, origin, store_generation from v order by node_id, i desc
    on conflict (node_id) do update
      set declaration_version = excluded.declaration_version, hash = excluded.hash, body_hash = excluded.body_hash,
        reconciled_at = excluded.reconciled_at, origin = excluded.origin, store_generation = excluded.store_generation, received_at = now()`);
}

/** Each of these nodes' history kept to its newest `keep`, one statement. */
export async function pruneReportHistory(tx: DbOrTx, nodeIds: string[], keep: number): Promise<void> {
  if (nodeIds.length === 0) return;
  await tx.execute(sql`
    delete from report_history h
    using (
      select id, row_number() over (partition by node_id order by id desc) as n from report_history
      where node_id in (select jsonb_array_elements_text(${JSON.stringify(nodeIds)}::jsonb)::uuid)
    ) k
    where h.id = k.id and k.n > ${keep}`);
}

/**
 * Deletes the bodies no report names any more (a history scrolled past them, a node deleted), in
 * one transaction of two statements: lock the bodies that look unnamed (skipping any a writer
 * holds), then delete those still unnamed in a fresh snapshot (a writer that named one and committed
 * in between is seen; one that comes after waits for this and inserts the body again).
 * Returns how many were deleted.
 */
export async function pruneReportBodies(db: DbOrTx): Promise<number> {
  return db.transaction(async (tx) => {
    const unnamed = sql`not exists (select 1 from latest_reports r where r.body_hash = ${reportBodies.hash})
      and not exists (select 1 from report_history h where h.body_hash = ${reportBodies.hash})`;
    const candidates = await tx.select({ hash: reportBodies.hash }).from(reportBodies).where(unnamed).for("update", { skipLocked: true });
    if (candidates.length === 0) return 0;
    const hashes = JSON.stringify(candidates.map((c) => c.hash));
    const gone = await tx
      .delete(reportBodies)
      .where(and(sql`${reportBodies.hash} in (select jsonb_array_elements_text(${hashes}::jsonb))`, unnamed))
      .returning({ hash: reportBodies.hash });
    return gone.length;
  });
}

/** How many bodies are stored (tests, measures). */
export async function countReportBodies(db: DbOrTx): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(reportBodies);
  return row!.n;
}

/**
 * The latest report body of each of these nodes that has one, in one statement: each node's body
 * name, and each distinct body once (on the first row naming it), however many nodes share it.
 */
export async function latestBodiesOf(db: DbOrTx, nodeIds: string[]): Promise<{ bodyOf: Map<string, string>; bodies: Map<string, ReportBody> }> {
  const bodyOf = new Map<string, string>();
  const bodies = new Map<string, ReportBody>();
  if (nodeIds.length === 0) return { bodyOf, bodies };
  const rows = await db
    .select({
      nodeId: latestReports.nodeId,
      bodyHash: latestReports.bodyHash,
      body: sql<unknown>`case when row_number() over (partition by ${latestReports.bodyHash}) = 1 then ${reportBodies.body} end`,
    })
    .from(latestReports)
    .innerJoin(reportBodies, eq(reportBodies.hash, latestReports.bodyHash))
    .where(sql`${latestReports.nodeId} in (select jsonb_array_elements_text(${JSON.stringify(nodeIds)}::jsonb)::uuid)`);
  for (const r of rows) {
    bodyOf.set(r.nodeId, r.bodyHash);
    // Raw SQL is not mapped: a driver may hand jsonb over as text.
    if (r.body != null) bodies.set(r.bodyHash, (typeof r.body === "string" ? JSON.parse(r.body) : r.body) as ReportBody);
  }
  return { bodyOf, bodies };
}
