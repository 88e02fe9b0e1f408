// Measurement, not a test (not collected by `npm test`; run with MESH_MEASURE=1 and MESH_MEASURE_IDLE=1, Postgres only): N raw hosts speaking the
// real protocol hold links to one in-process gateway and sit idle; prints the database writes the idle
// fleet costs (pg_stat_user_tables / pg_stat_database deltas). Figures go to docs/decisions (liveness).
// Run: cd packages/api && MESH_MEASURE=1 MESH_MEASURE_IDLE=1 DATABASE_URL=postgres://root@127.0.0.1:5432/postgres \
//        MEASURE_HOSTS=2000 MEASURE_IDLE_S=60 npx vitest run src/gateway/idle-writes.measure.test.ts
// The control plane's periodic workers run too, at their defaults, as `npm start` runs them (the alert
// worker with its revoke-offline sweep, the rollout worker); MEASURE_WORKERS=0 leaves them out.
// MEASURE_TIMER_REPORTS=0: no report at all in the window (a fully idle fleet). The rows written per
// table are printed too, to name each writer.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import pino from "pino";
import WebSocket from "ws";
import postgres from "postgres";
import { createDb } from "@mesh/db";
import { migrate } from "@mesh/db/migrate";
import { createPostgresDatabase } from "@mesh/db/testing";
import { AGENT_PATH, AUTH_HEADER, CHALLENGE_PATH, challengeMessage } from "@mesh/protocol";
import type { Deps } from "../deps";
import { createToken } from "../services/tokens";
import { testReport, type testKeyPair } from "../testing/host-facts";
import { enrolWithToken } from "../testing/test-nodes";
import { createGateway } from "./gateway";
import { startAlertWorker } from "../alerts/alert-worker";
import { startRolloutWorker } from "../rollouts/rollout-worker";

const HOSTS = Number(process.env.MEASURE_HOSTS ?? 2000);
const IDLE_S = Number(process.env.MEASURE_IDLE_S ?? 60);
/** Each host sends its (unchanged) report once during the window, as a host's reconcile timer does. */
const TIMER_REPORTS = process.env.MEASURE_TIMER_REPORTS !== "0";
/** The control plane's periodic workers (alerts and revoke-offline sweep, rollouts), at their defaults. */
const WORKERS = process.env.MEASURE_WORKERS !== "0";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

describe.skipIf(!process.env.MESH_MEASURE_IDLE || !process.env.DATABASE_URL)("idle fleet writes", () => {
  it(`${HOSTS} idle raw hosts for ${IDLE_S} s`, { timeout: 30 * 60_000 }, async () => {
    // A small pool: the Postgres server is shared, and its connection limit is not what is measured here.
    const pg = await createPostgresDatabase();
    const database = await createDb({ url: pg.url, maxConnections: 10 });
    await migrate(database);
    const t = { database, drop: async () => (await database.close(), await pg.drop()) };
    const stats = postgres(pg.url, { max: 1, onnotice: () => {} });
    const deps: Deps = { db: t.database.db, log: pino({ level: "warn" }) };
    const gateway = await createGateway({ deps, bus: t.database.bus, gatewayId: "gw-measure" });
    const stopAlerts = WORKERS ? startAlertWorker(deps) : async () => {};
    const rollouts = WORKERS ? startRolloutWorker(deps) : null;
    const server = http.createServer((req, res) => (req.url === CHALLENGE_PATH ? gateway.handleChallenge(req, res) : res.writeHead(404).end()));
    server.on("upgrade", (req, socket, head) => gateway.handleUpgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses: HOSTS } });
    const hosts: Array<{ nodeId: string; privateKey: ReturnType<typeof testKeyPair>["privateKey"] }> = [];
    await inBatches([...Array(HOSTS).keys()], 20, async () => {
      const { nodeId, privateKey } = await enrolWithToken(deps, token);
      hosts.push({ nodeId, privateKey });
    });
    const report = testReport(1);
    const read = async () => {
      const [tables] = await stats`select coalesce(sum(n_tup_upd + n_tup_ins + n_tup_del), 0)::bigint as rows,
        coalesce(sum(case when relname = 'nodes' then n_tup_upd end), 0)::bigint as nodes from pg_stat_user_tables`;
      const [db] = await stats`select xact_commit::bigint as commits from pg_stat_database where datname = current_database()`;
      const perTable = new Map(
        (await stats`select relname, (n_tup_upd + n_tup_ins + n_tup_del)::bigint as n from pg_stat_user_tables`).map((r) => [r.relname as string, Number(r.n)]),
      );
      return { rows: Number(tables!.rows), nodes: Number(tables!.nodes), commits: Number(db!.commits), perTable };
    };
    // The link-up phase too: statistics reach the shared view up to ~10 s late (PG 15).
    await sleep(12_000);
    const beforeLinks = await read();
    const sockets: WebSocket[] = [];
    let seq = 0;
    const sendReport = (ws: WebSocket) =>
      new Promise<void>((resolve) => {
        const mine = ++seq;
        const onMessage = (data: WebSocket.RawData) => {
          const frame = JSON.parse(String(data));
          if (frame.type === "ack" && frame.seq === mine) ws.off("message", onMessage), resolve();
        };
        ws.on("message", onMessage);
        ws.send(JSON.stringify({ type: "report", seq: mine, report: { ...report, reconciledAt: new Date().toISOString() } }));
      });
    await inBatches(hosts, 50, async (host) => {
      const { nonce } = (await (await fetch(base + CHALLENGE_PATH)).json()) as { nonce: string };
      const signature = sign(null, Buffer.from(challengeMessage(host.nodeId, nonce)), host.privateKey).toString("base64");
      const auth = Buffer.from(JSON.stringify({ type: "auth", nodeId: host.nodeId, nonce, signature, declarationVersion: 1, hostVersion: "0.1.0" })).toString(
        "base64url",
      );
      const ws = await new Promise<WebSocket>((resolve, reject) => {
        const w = new WebSocket(base.replace("http", "ws") + AGENT_PATH, { headers: { [AUTH_HEADER]: auth }, perMessageDeflate: false });
        w.once("open", () => resolve(w));
        w.once("error", reject);
      });
      sockets.push(ws);
      // The report a host sends when its link comes up (stored: the first one is a change).
      await sendReport(ws);
    });
    const connected = (await stats`select count(*)::int as n from nodes where gateway_id is not null`)[0]!.n as number;
    expect(connected).toBe(HOSTS);
    // Statistics reach the shared view up to ~10 s late (PG 15): let the setup's settle first.
    await sleep(12_000);
    const before = await read();
    console.log(
      `LINKUP ${HOSTS} hosts (batches of 50 handshakes, each host's first report): nodes row updates ${before.nodes - beforeLinks.nodes}, ` +
        `row writes ${before.rows - beforeLinks.rows}, commits ${before.commits - beforeLinks.commits} (includes reads and 12 s of beats)`,
    );
    const started = Date.now();
    if (TIMER_REPORTS) {
      // Spread over the window's first half, like reconcile timers firing at random phases.
      const spread = (IDLE_S * 1000) / 2 / sockets.length;
      for (const ws of sockets) {
        void sendReport(ws);
        await sleep(spread);
      }
    }
    await sleep(Math.max(0, IDLE_S * 1000 - (Date.now() - started)));
    const after = await read();
    const seconds = (Date.now() - started) / 1000;
    const per = (n: number) => (n / seconds).toFixed(2);
    console.log(
      `IDLE ${HOSTS} hosts, ${seconds.toFixed(0)} s${TIMER_REPORTS ? ", one unchanged timer report each" : ""}: ` +
        `row writes ${after.rows - before.rows} (${per(after.rows - before.rows)}/s), ` +
        `nodes row updates ${after.nodes - before.nodes} (${per(after.nodes - before.nodes)}/s), ` +
        `commits ${after.commits - before.commits} (${per(after.commits - before.commits)}/s; includes this script's 2 reads)` +
        (WORKERS ? "; with the alert and rollout workers" : "; gateway only"),
    );
    const byTable = [...after.perTable].map(([table, n]) => [table, n - (before.perTable.get(table) ?? 0)] as const).filter(([, n]) => n > 0);
    console.log(`IDLE rows written per table: ${byTable.map(([table, n]) => `${table} ${n} (${per(n)}/s)`).join(", ") || "none"}`);
    for (const ws of sockets) ws.terminate();
    await rollouts?.stop();
    await stopAlerts();
    await gateway.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await stats.end();
    await t.drop();
  });
});
