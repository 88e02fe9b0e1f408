// The change bus side by side: LISTEN/NOTIFY vs NATS, each carrying notifications made inside
// writing transactions. Prints publish->receive latency and throughput. Run: npm run bench:bus -w @mesh/test
// (DATABASE_URL set: Postgres, else PGlite only; MESH_BENCH_BUS_N for the count).
import { performance } from "node:perf_hooks";
import { sql } from "drizzle-orm";
import { createDb, notify, CHANNELS, type Database } from "@mesh/db";
import { createPostgresDatabase, startNatsServer } from "@mesh/db/testing";

const N = Number(process.env.MESH_BENCH_BUS_N ?? 5000);
const SEQUENTIAL = Math.min(N, 1000);
const CONCURRENCY = 32;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** One writing transaction that notifies: the shape every service has. */
const writeAndNotify = (d: Database, i: number) =>
  d.db.transaction(async (tx) => {
    await tx.execute(sql`insert into bench_bus (v) values (${String(i)})`);
    await notify(tx, CHANNELS.declaration, `${i}`);
  });

async function measure(name: string, publisher: Database, subscriber: Database) {
  await publisher.db.execute(sql`create table if not exists bench_bus (id serial primary key, v text not null)`);
  const received = new Map<number, number>();
  let waiting: (() => void) | null = null;
  let want = 0;
  const unsubscribe = await subscriber.bus.subscribe(CHANNELS.declaration, (p) => {
    received.set(Number(p), performance.now());
    if (waiting && received.size >= want) waiting(), (waiting = null);
  });
  const allReceived = (n: number) =>
    new Promise<void>((resolve) => {
      want = n;
      if (received.size >= n) resolve();
      else waiting = resolve;
    });

  // latency: one transaction at a time, from its start to the notification heard by the other instance
  const latencies: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t0 = performance.now();
    await writeAndNotify(publisher, i);
    await allReceived(i + 1);
    latencies.push(received.get(i)! - t0);
  }

  // throughput: CONCURRENCY transactions in flight
  received.clear();
  const offset = 1_000_000;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) await writeAndNotify(publisher, offset + next++);
    }),
  );
  const committedMs = performance.now() - t0;
  await allReceived(N);
  const deliveredMs = performance.now() - t0;
  await unsubscribe();
  return {
    bus: name,
    "latency p50 ms": pct(latencies, 50).toFixed(2),
    "latency p99 ms": pct(latencies, 99).toFixed(2),
    "commits/s": Math.round(N / (committedMs / 1000)),
    "delivered/s": Math.round(N / (deliveredMs / 1000)),
  };
}

async function main() {
  const nats = await startNatsServer();
  const rows = [];
  try {
    const engines: Array<"postgres" | "pglite"> = process.env.DATABASE_URL ? ["postgres", "pglite"] : ["pglite"];
    for (const engine of engines) {
      for (const busUrl of [undefined, nats.url]) {
        const pg = engine === "postgres" ? await createPostgresDatabase("mesh_bench_bus") : undefined;
        const publisher = await createDb({ url: pg?.url, dataDir: "memory://", busUrl, maxConnections: CONCURRENCY + 4 });
        // Postgres: the listening instance is another process's handle; PGlite has one.
        const subscriber = pg ? await createDb({ url: pg.url, busUrl, maxConnections: 2 }) : publisher;
        try {
          rows.push({ engine, ...(await measure(busUrl ? "nats" : "listen/notify", publisher, subscriber)) });
        } finally {
          if (subscriber !== publisher) await subscriber.close();
          await publisher.close();
          await pg?.drop();
        }
      }
    }
  } finally {
    await nats.stop();
  }
  console.log(`change bus: ${SEQUENTIAL} sequential and ${N} concurrent (${CONCURRENCY}) writing transactions, one notification each`);
  console.table(rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
