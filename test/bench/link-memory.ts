// What one idle link costs the gateway, measured without the noise of a whole control plane: a real
// gateway (createGateway) in this process, served on loopback, and LINKS hosts linked to it from the
// fleet simulator's worker processes (so no client socket lives in this process). Heap and RSS are read
// after forced collections before and after linking. Prints; asserts nothing.
// Run: DATABASE_URL=postgres://root@127.0.0.1:5432/postgres npm run bench:link-memory -w @mesh/test
//      (LINKS, default 5000; BENCH_WORKERS, default 2)
import { generateKeyPairSync } from "node:crypto";
import pino from "pino";
import { sql } from "drizzle-orm";
import { createTestDatabase } from "@mesh/db/testing";
import { createGateway } from "../../packages/api/src/gateway/gateway";
import { serveGateway } from "../../packages/api/src/testing/raw-hosts";
import type { Deps } from "../../packages/api/src/deps";
import { Fleet, type Identity } from "./fleet-sim/fleet";

const LINKS = Number(process.env.LINKS ?? 5000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const gc = (globalThis as { gc?: () => void }).gc;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function settledMemory() {
  for (let i = 0; i < 3; i++) {
    gc!();
    await sleep(200);
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
}

async function main() {
  if (!gc) throw new Error("run with node --expose-gc (npm run bench:link-memory does)");
  if (!process.env.DATABASE_URL) throw new Error("set DATABASE_URL: the bench runs on Postgres");
  process.env.BENCH_REPORT_S = "0"; // idle links: no timer reports
  const t = await createTestDatabase("postgres");
  const deps: Deps = { db: t.database.db, log: pino({ level: "silent" }) };
  const identities: Identity[] = [];
  const rows: { id: string; key: string }[] = [];
  for (let i = 0; i < LINKS; i++) {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const id = crypto.randomUUID();
    rows.push({ id, key: publicKey.export({ type: "spki", format: "der" }).toString("base64") });
    identities.push({ nodeId: id, privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString() });
  }
  await t.database.db.execute(sql`insert into nodes (id, name, public_key, machine_id, profile, inventory, state)
    select (r->>'id')::uuid, 'n' || (r->>'id'), r->>'key', r->>'id', '{}'::jsonb, '{}'::jsonb, 'disconnected'
    from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) r`);
  const gateway = await createGateway({ deps, bus: t.database.bus, admissionsPerSecond: 100_000, connectsPerMinute: 1000, pingIntervalMs: 15_000 });
  const served = await serveGateway(gateway);
  const before = await settledMemory();
  const fleet = new Fleet(WORKERS);
  fleet.link(served.base, identities);
  await fleet.until(() => fleet.linked.size === LINKS, 300_000, "every link up");
  await sleep(5_000);
  const after = await settledMemory();
  const per = (a: number, b: number) => ((b - a) / LINKS / 1024).toFixed(2);
  console.log(`| links | RSS per link | heap per link | external per link | RSS before → after |`);
  console.log(`| --- | --- | --- | --- | --- |`);
  console.log(
    `| ${LINKS.toLocaleString("en")} | ${per(before.rss, after.rss)} KiB | ${per(before.heap, after.heap)} KiB | ${per(before.external, after.external)} KiB | ${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} MiB |`,
  );
  await fleet.stop();
  await gateway.close();
  await served.close();
  await t.drop();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
