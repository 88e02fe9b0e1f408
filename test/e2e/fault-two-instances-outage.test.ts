// One database outage does not declare the fleet dead (issue 12, item 4). Two control planes
// (MESH_ROLE all and gateway) on one private Postgres, hosts linked to each over the real protocol.
// The database is stopped for longer than the stale window and started again: the instance that
// recovers first must not sweep the other as dead for a silence they shared, so no node whose link
// stayed up is ever marked disconnected. An instance that really died meanwhile is still swept.
import pino from "pino";
import postgres from "postgres";
import type WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "@mesh/db";
import { enrolRawHosts, openRawLink, type RawHost } from "../../packages/api/src/testing/raw-hosts";
import { ControlPlane } from "../harness/control-plane";
import { PrivatePostgres } from "../harness/private-postgres";
import { sleep, waitFor } from "../harness/wait";

const HEARTBEAT_MS = 1_000;
const STALE_MS = 8_000;
/** Longer than the stale window: every gateway's last beat is older than it when the database returns. */
const OUTAGE_MS = STALE_MS + 5_000;
const HOSTS_EACH = 3;

interface NodeRow {
  id: string;
  state: string;
  gateway_id: string | null;
}

function gatewayIdOf(cp: ControlPlane): string {
  const m = /"gatewayId":"([^"]+)"/.exec(cp.output);
  if (!m) throw new Error(`no gatewayId in the log:\n${cp.output}`);
  return m[1]!;
}

describe("two instances through a database outage", () => {
  let pg: PrivatePostgres;
  let all: ControlPlane;
  let gateway: ControlPlane;
  let sql: postgres.Sql;
  let onAll: RawHost[] = [];
  let onGateway: RawHost[] = [];
  const links: WebSocket[] = [];

  const nodeRows = () => sql<NodeRow[]>`select id, state, gateway_id from nodes order by id`;
  /** The database's clock: every judgement of silence is made on it. */
  const dbNow = async () => (await sql<{ now: Date }[]>`select now()`)[0]!.now;

  /**
   * Watches the node rows (a few times a second) until the database's clock passes `until`, and
   * returns every row seen that was not enrolled on a gateway (bounded: 90 s). Errors while the database is away are skipped.
   */
  async function watchNodes(ids: Set<string>, until: () => Promise<boolean>, what: string): Promise<NodeRow[]> {
    const bad: NodeRow[] = [];
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; rows now: ${JSON.stringify(await nodeRows().catch(() => "unreadable"))}`);
      try {
        for (const n of await nodeRows()) if (ids.has(n.id) && (n.state !== "enrolled" || !n.gateway_id)) bad.push(n);
        if (await until()) return bad;
      } catch {
        /* the database is not back yet */
      }
      await sleep(200);
    }
  }

  beforeAll(async () => {
    pg = await PrivatePostgres.start();
    const env = { MESH_GATEWAY_HEARTBEAT_MS: String(HEARTBEAT_MS), MESH_GATEWAY_STALE_MS: String(STALE_MS) };
    all = await ControlPlane.start({ engine: "postgres", databaseUrl: pg.url, env: { ...env, MESH_ROLE: "all" } });
    gateway = await ControlPlane.start({ engine: "postgres", databaseUrl: pg.url, env: { ...env, MESH_ROLE: "gateway" } });
    sql = postgres(pg.url, { max: 1, onnotice: () => {}, connect_timeout: 2 });
    const database = await createDb({ url: pg.url, maxConnections: 2 });
    try {
      const hosts = await enrolRawHosts({ db: database.db, log: pino({ level: "silent" }) }, 2 * HOSTS_EACH);
      onAll = hosts.slice(0, HOSTS_EACH);
      onGateway = hosts.slice(HOSTS_EACH);
    } finally {
      await database.close();
    }
  }, 180_000);

  afterAll(async () => {
    for (const ws of links) ws.terminate();
    await sql?.end({ timeout: 1 });
    await gateway?.dispose();
    await all?.dispose();
    await pg?.dispose();
  });

  it("links hosts to both instances", async () => {
    for (const h of onAll) links.push(await openRawLink(all.url, h));
    for (const h of onGateway) links.push(await openRawLink(gateway.url, h));
    const rows = await waitFor(
      "every node enrolled on its instance",
      async () => {
        const rows = await nodeRows();
        return rows.length === 2 * HOSTS_EACH && rows.every((n) => n.state === "enrolled" && n.gateway_id) ? rows : null;
      },
      30_000,
    );
    const byGateway = (id: string) =>
      rows
        .filter((n) => n.gateway_id === id)
        .map((n) => n.id)
        .sort();
    expect(byGateway(gatewayIdOf(all))).toEqual(onAll.map((h) => h.nodeId).sort());
    expect(byGateway(gatewayIdOf(gateway))).toEqual(onGateway.map((h) => h.nodeId).sort());
  });

  it("marks no node whose link stayed up disconnected when the database was away longer than the stale window", async () => {
    const last = (await sql<{ last: string }[]>`select coalesce(max(id), 0)::text as last from events`)[0]!.last;
    pg.stop("fast");
    await sleep(OUTAGE_MS);
    pg.start();
    const back = await waitFor("the database back", () => dbNow().catch(() => null), 30_000);
    // Past a full stale window after both instances beat again: a sweep on recovery would have happened by then.
    const ids = new Set([...onAll, ...onGateway].map((h) => h.nodeId));
    const bad = await watchNodes(
      ids,
      async () => {
        const beats = await sql<{ id: string; heartbeat_at: Date }[]>`select id, heartbeat_at from gateways`;
        const beatBack = [gatewayIdOf(all), gatewayIdOf(gateway)].every((g) => beats.some((b) => b.id === g && b.heartbeat_at > back));
        return beatBack && (await dbNow()).getTime() > back.getTime() + 2 * STALE_MS;
      },
      "both instances beating for two stale windows",
    );
    expect(bad).toEqual([]);
    const gone = await sql`select node_id, action, data from events where id > ${last}::bigint and action = 'node.disconnect'`;
    expect(gone).toEqual([]);
    for (const ws of links) expect(ws.readyState).toBe(ws.OPEN);
    expect((await sql`select id from gateways order by id`).map((g) => g.id).sort()).toEqual([gatewayIdOf(all), gatewayIdOf(gateway)].sort());
  }, 120_000);

  it("still sweeps an instance that died during an outage, and only its nodes", async () => {
    const deadId = gatewayIdOf(gateway);
    pg.stop("fast");
    await gateway.kill("SIGKILL");
    await sleep(OUTAGE_MS);
    pg.start();
    await waitFor("the database back", () => dbNow().catch(() => null), 30_000);
    const survivors = new Set(onAll.map((h) => h.nodeId));
    let swept: NodeRow[] = [];
    const bad = await watchNodes(
      survivors,
      async () => {
        const rows = await nodeRows();
        swept = rows.filter((n) => onGateway.some((h) => h.nodeId === n.id));
        return swept.every((n) => n.state === "disconnected" && n.gateway_id === null);
      },
      "the dead instance's nodes released",
    );
    expect(bad).toEqual([]);
    expect(swept).toHaveLength(HOSTS_EACH);
    expect(await sql`select id from gateways where id = ${deadId}`).toEqual([]);
    const released = await sql`select node_id from events where action = 'node.disconnect' and data->>'reason' = 'its gateway stopped'`;
    expect(released.map((e) => e.node_id).sort()).toEqual(onGateway.map((h) => h.nodeId).sort());
  }, 120_000);
});
