// Enrolment rate: 500 sequential and 50 concurrent enrolments against a real
// control plane (Postgres when DATABASE_URL is set), each with its own token.
// Run: DATABASE_URL=postgres://… npx tsx bench/enrolment.ts
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolRaw, inventory, keyPair, profile } from "../harness/link";
import postgres from "postgres";

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function enrolOnce(url: string, token: string): Promise<number> {
  const { publicKey } = keyPair();
  const t0 = performance.now();
  const r = await enrolRaw(url, { token, publicKey, profile: profile(crypto.randomUUID().replace(/-/g, "")), inventory });
  if (r.status !== 201) throw new Error(`enrol: ${r.status} ${JSON.stringify(r.body)}`);
  return performance.now() - t0;
}

async function main() {
  const engine = engines()[0]!;
  const cp = await ControlPlane.start({ engine, env: { MESH_ENROL_LIMIT_PER_ADDRESS: "1000000", MESH_LOG_LEVEL: "warn" } });
  try {
    const client = api(cp.url);
    await client.mutate("role.upsert", { name: "bench", resources: [{ type: "directory", id: "d", path: "/srv/bench" }] });
    const report = (label: string, n: number, wallMs: number, lat: number[]) => {
      lat.sort((a, b) => a - b);
      console.log(
        `${label}: ${n} enrolments in ${(wallMs / 1000).toFixed(2)} s = ${(n / (wallMs / 1000)).toFixed(1)}/s; latency p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms`,
      );
    };
    // How many transactions made the nodes (on Postgres): a transaction's now() is its start, shared
    // by every node it inserts, so distinct created_at = transactions (group commit batches them).
    const stats = cp.databaseUrl ? postgres(cp.databaseUrl, { max: 1 }) : null;
    const made = async () => {
      if (!stats) return { nodes: 0, transactions: 0 };
      const [row] = await stats`select count(*)::int as nodes, count(distinct created_at)::int as transactions from nodes`;
      return { nodes: row!.nodes as number, transactions: row!.transactions as number };
    };
    const tokens = async (n: number) => Promise.all(Array.from({ length: n }, async () => (await client.mutate("token.create", {})).token as string));

    // BENCH_ENROL_N enrolments at each concurrency (default 500 sequential and 50 concurrent, as before).
    const n = Number(process.env.BENCH_ENROL_N ?? 0);
    const levels = (process.env.BENCH_ENROL_CONCURRENCY ?? (n ? "1,10,50" : "1")).split(",").map(Number);
    for (const c of levels) {
      const count = n || 500;
      const pool = await tokens(count);
      const before = await made();
      const lat: number[] = [];
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: c }, async () => {
          for (let token = pool.pop(); token; token = pool.pop()) lat.push(await enrolOnce(cp.url, token));
        }),
      );
      report(`concurrency ${c} (${engine})`, count, performance.now() - t0, lat);
      if (stats) {
        const after = await made();
        const tx = after.transactions - before.transactions;
        console.log(`  ${after.nodes - before.nodes} nodes made in ${tx} transactions (${((after.nodes - before.nodes) / tx).toFixed(1)} per transaction)`);
      }
    }
    if (!n) {
      const conTokens = await tokens(50);
      const t0 = performance.now();
      const con = await Promise.all(conTokens.map((token) => enrolOnce(cp.url, token)));
      report(`50 concurrent (${engine})`, 50, performance.now() - t0, con);
    }
    await stats?.end();
  } finally {
    await cp.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
