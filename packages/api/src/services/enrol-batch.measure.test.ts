// Measurement, not a test (not collected by `npm test`; run with MESH_MEASURE_ENROL=1, Postgres only): N
// enrolments at concurrency 1, 10 and 50, in process (no HTTP, no load generator), one transaction per
// enrolment the old way (token read + enrolOne, as enrolNode did before group commit) and through enrolNode
// (group commit), the two back to back at each concurrency. Prints enrolments per second, p50/p99 latency
// and nodes per transaction. Figures go to the enrolment group commit decision note.
// MEASURE_CONCURRENCY=1,10,50 (default). MEASURE_SHARED_TOKEN=1: every enrolment uses one token (a fleet enrolling with one token) instead of its own.
// Run: cd packages/api && MESH_MEASURE_ENROL=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        MEASURE_ENROLMENTS=500 npx vitest run src/services/enrol-batch.measure.test.ts
import { describe, expect, it } from "vitest";
import pino from "pino";
import { sql } from "drizzle-orm";
import { createDb, nodes } from "@mesh/db";
import { migrate } from "@mesh/db/migrate";
import { createPostgresDatabase } from "@mesh/db/testing";
import type { EnrolRequest } from "@mesh/protocol";
import type { Deps } from "../deps";
import { MeshError } from "../errors";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { enrolOne } from "./enrol-one";
import { parseToken } from "./enrolment-token";
import { readTokens, tokenRefusal } from "./enrolment-token-use";
import { upsertRole } from "./roles";
import { takeStatementTimes } from "../batching/statement-times";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";

const N = Number(process.env.MEASURE_ENROLMENTS ?? 500);
const run = process.env.MESH_MEASURE_ENROL === "1" && !!process.env.DATABASE_URL;
const sharedToken = process.env.MEASURE_SHARED_TOKEN === "1";
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** The old path: the token read (one SELECT), then one transaction for the enrolment. */
async function enrolOneByOne(deps: Deps, request: EnrolRequest) {
  const parsed = parseToken(request.token)!;
  const row = (await readTokens(deps.db, [parsed.id])).get(parsed.id);
  const refusal = tokenRefusal(row, parsed.secret, new Date());
  if (refusal) throw refusal;
  return enrolOne(deps, request, { address: "127.0.0.1" }, row!);
}

describe.runIf(run)("enrolment group commit (measurement)", () => {
  it("prints enrolments per second one transaction each and grouped", { timeout: 30 * 60_000 }, async () => {
    const pg = await createPostgresDatabase("mesh_measure");
    const database = await createDb({ url: pg.url, maxConnections: 10 });
    try {
      await migrate(database);
      const deps: Deps = { db: database.db, log: pino({ level: "silent" }) };
      await upsertRole(deps, { actor: "measure", input: { name: "bench", resources: [{ type: "directory", id: "d", path: "/srv/bench" }] } });
      const shared = sharedToken ? (await createToken(deps, { actor: "measure", publicUrl: "http://cp", input: { maxUses: 10_000 } })).token : null;
      const transactions = async () => {
        const [row] = await database.db.select({ n: sql<number>`count(distinct ${nodes.createdAt})::int` }).from(nodes);
        return row!.n;
      };
      const ways = [
        ["one transaction each", enrolOneByOne],
        ["group commit", (d: Deps, r: EnrolRequest) => enrolNode(d, r, { address: "127.0.0.1" })],
      ] as const;
      for (const c of (process.env.MEASURE_CONCURRENCY ?? "1,10,50").split(",").map(Number)) {
        // MEASURE_ORDER=grouped-first: the grouped run first (each run's tables hold the nodes of those before it).
        for (const [label, enrol] of process.env.MEASURE_ORDER === "grouped-first" ? [...ways].reverse() : ways) {
          const tokens = shared
            ? Array.from({ length: N }, () => shared)
            : await Promise.all(
                Array.from({ length: N }, async () => (await createToken(deps, { actor: "measure", publicUrl: "http://cp", input: {} })).token),
              );
          const requests = tokens.map(
            (token): EnrolRequest => ({ token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() }),
          );
          const before = await transactions();
          const lat: number[] = [];
          const t0 = performance.now();
          await Promise.all(
            Array.from({ length: c }, async () => {
              for (let r = requests.pop(); r; r = requests.pop()) {
                const s = performance.now();
                await enrol(deps, r).catch((err) => {
                  throw err instanceof MeshError ? new Error(`${err.code}: ${err.message}`) : err;
                });
                lat.push(performance.now() - s);
              }
            }),
          );
          const wall = performance.now() - t0;
          lat.sort((a, b) => a - b);
          const tx = (await transactions()) - before;
          console.log(
            `c=${c} ${label}: ${N} in ${(wall / 1000).toFixed(2)} s = ${(N / (wall / 1000)).toFixed(0)}/s; p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms; ${(N / tx).toFixed(1)} nodes per transaction`,
          );
          const times = takeStatementTimes();
          if (times.length > 0) console.table(times);
          expect(lat).toHaveLength(N);
        }
      }
    } finally {
      await database.close();
      await pg.drop();
    }
  });
});
