// In-process figures for pushing one change to many links (issue 11, "push once per hash"): the
// old gateway's way (per node: read its declaration, serialise it, send) against the pusher's
// (one query for versions, one for bodies, one serialisation per body, shared bytes per link).
// Prints; asserts nothing. PUSH_LINKS (2000), PUSH_BODY_BYTES (2048), PUSH_RUNS (3);
// Postgres when DATABASE_URL is set, else PGlite.
import http from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import WebSocket, { WebSocketServer } from "ws";
import { sql } from "drizzle-orm";
import { createTestDatabase } from "@mesh/db/testing";
import type { Declaration, Resource, ServerFrame } from "@mesh/protocol";
import { contentHash } from "../../packages/api/src/compile/hash";
import { currentDeclaration, currentDeclarations, loadBodies } from "../../packages/api/src/services/declaration-store";
import { revealGrantFiles } from "../../packages/api/src/grants/reveal-grant-files";
import { createPusher, type PushLink } from "../../packages/api/src/gateway/push";
import type { Deps } from "../../packages/api/src/deps";

const LINKS = Number(process.env.PUSH_LINKS ?? 2000);
const BODY_BYTES = Number(process.env.PUSH_BODY_BYTES ?? 2048);
const RUNS = Number(process.env.PUSH_RUNS ?? 3);

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
const started = performance.now();
const phase = (what: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${what}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const engine = process.env.DATABASE_URL ? "postgres" : "pglite";
  const t = await createTestDatabase(engine);
  const deps: Deps = { db: t.database.db, log: pino({ level: "silent" }) };
  const log = pino({ level: "silent" });
  const db = t.database.db;

  // LINKS nodes, each at version `v` of one body; set-based, so the setup costs seconds.
  const body = (round: number): Resource[] => [{ type: "file", id: "motd", path: "/etc/motd", content: `${round}:`.padEnd(BODY_BYTES, "x") } as Resource];
  await db.execute(sql`insert into nodes (name, public_key, machine_id, profile, inventory, state)
    select 'n' || i, 'key' || i, 'machine' || i, '{}'::jsonb, '{}'::jsonb, 'enrolled' from generate_series(1, ${LINKS}) i`);
  const ids = (await db.execute(sql`select id from nodes order by name`)) as unknown as { rows?: { id: string }[] } & { id: string }[];
  const nodeIds = (ids.rows ?? ids).map((r) => r.id);
  let version = 0;
  const declareAll = async () => {
    version++;
    const resources = body(version);
    const hash = contentHash(resources);
    await db.execute(sql`insert into declaration_bodies (hash, resources) values (${hash}, ${JSON.stringify(resources)}::jsonb) on conflict do nothing`);
    await db.execute(sql`insert into declarations (node_id, version, hash) select id, ${version}, ${hash} from nodes`);
    await db.execute(sql`update nodes set declared_version = ${version}`);
  };
  await declareAll();
  phase("nodes declared");

  // LINKS websockets in this process: the server ends play the gateway's links.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
  const server = http.createServer();
  const links: PushLink[] = [];
  server.on("upgrade", (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => {
      links.push({ nodeId: new URL(req.url!, "http://x").searchParams.get("node")!, ws, socket, knownVersion: version, queue: Promise.resolve() });
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  let waiting = 0;
  let allReceived: () => void = () => {};
  let expected = 0;
  for (let i = 0; i < nodeIds.length; i += 200) {
    await Promise.all(
      nodeIds.slice(i, i + 200).map(
        (nodeId) =>
          new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(`${url}?node=${nodeId}`, { perMessageDeflate: false });
            ws.on("message", (data) => {
              const frame = JSON.parse(String(data)) as ServerFrame;
              if (frame.type === "declaration" && frame.declaration.version === expected && --waiting === 0) allReceived();
            });
            ws.once("open", () => resolve());
            ws.once("error", reject);
          }),
      ),
    );
  }
  while (links.length < LINKS) await new Promise((r) => setTimeout(r, 10));
  phase("links up");

  // The old gateway's pushDeclaration (before this change), per link on its queue.
  async function oldPush(link: PushLink) {
    const current = await currentDeclaration(deps.db, link.nodeId);
    if (!current) return;
    link.knownVersion = Math.max(link.knownVersion, current.version);
    const revealed = await revealGrantFiles(deps.db, undefined, link.nodeId, current.resources as Resource[]);
    if (!revealed.ok) return;
    const declaration: Declaration = { version: current.version, hash: current.hash, resources: revealed.resources };
    link.ws.send(Buffer.from(JSON.stringify({ type: "declaration", declaration } satisfies ServerFrame)));
  }
  const pusher = createPusher(deps, log);

  const measure = async (way: "old" | "new") => {
    await declareAll();
    expected = version;
    waiting = LINKS;
    const received = new Promise<void>((r) => (allReceived = r));
    gc();
    phase(`${way} push`);
    const held = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const held0 = held();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const t0 = performance.now();
    if (way === "new") await pusher.pushChanged(links);
    else await Promise.all(links.map((l) => (l.queue = l.queue.then(() => oldPush(l)))));
    const written = performance.now() - t0;
    const heldDelta = held() - held0;
    peak = Math.max(peak, process.memoryUsage().rss);
    await received;
    const all = performance.now() - t0;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    return { written, all, rssDelta: peak - rss0, heldDelta };
  };

  const results: Record<string, { written: number[]; all: number[]; rss: number[]; held: number[] }> = {
    old: { written: [], all: [], rss: [], held: [] },
    new: { written: [], all: [], rss: [], held: [] },
  };
  await measure("new"); // warm both paths once
  await measure("old");
  for (let run = 0; run < RUNS; run++) {
    for (const way of ["old", "new"] as const) {
      const r = await measure(way);
      results[way]!.written.push(r.written);
      results[way]!.all.push(r.all);
      results[way]!.rss.push(r.rssDelta);
      results[way]!.held.push(r.heldDelta);
    }
  }
  // The new way's two queries alone, to tell them from the sending.
  const queryTimes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const q0 = performance.now();
    const rows = await currentDeclarations(
      deps.db,
      links.map((l) => l.nodeId),
    );
    await loadBodies(
      deps.db,
      rows.map((r) => r.hash),
    );
    queryTimes.push(performance.now() - q0);
  }
  console.log(`push of a ${BODY_BYTES}-byte body to ${LINKS} links, ${engine}, median of ${RUNS} runs (clients in the same process)`);
  console.log("way  | notification -> last frame written | -> last frame received | RSS delta (peak) | heap+external held when written");
  for (const way of ["old", "new"] as const) {
    const r = results[way]!;
    console.log(
      `${way}  | ${median(r.written).toFixed(0)} ms | ${median(r.all).toFixed(0)} ms | ${mib(median(r.rss))} MiB | ${mib(median(r.held))} MiB   (written: ${r.written.map((x) => x.toFixed(0)).join(", ")})`,
    );
  }
  console.log(`new way's two queries (versions of ${LINKS} nodes, then bodies): ${median(queryTimes).toFixed(0)} ms`);
  for (const l of links) l.ws.terminate();
  server.close();
  phase("dropping the database");
  await t.drop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
