// Scale-out failover, on both change buses: one web instance and two gateways on one
// Postgres, real mesh-host processes reaching the gateways through a load balancer.
// A gateway killed with -9 has its hosts land on the other; no change is lost, not
// even one committed while those hosts had no link.
import fs from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_PATH, CHALLENGE_PATH } from "@mesh/protocol";
import { startNatsServer } from "@mesh/db/testing";
import { ControlPlane } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { Balancer, backendOf } from "../harness/balancer";
import { waitFor } from "../harness/wait";

const HOSTS = 6;
const buses = ["notify", "nats"] as const;

interface NodeRow {
  id: string;
  state: string;
  gateway_id: string | null;
  declared_version: number;
  reported_version: number | null;
}

const motd = (content: string) => ({
  name: "base",
  selector: { labels: { tier: "web" } },
  resources: [{ type: "file", id: "motd", path: "/etc/motd", content, mode: "0644" }],
});

/** The gateway id an instance logged when it started listening. */
function gatewayIdOf(cp: ControlPlane): string {
  const m = /"gatewayId":"([^"]+)"/.exec(cp.output);
  if (!m) throw new Error(`no gatewayId in the gateway's log:\n${cp.output}`);
  return m[1]!;
}

describe.skipIf(!process.env.DATABASE_URL).each(buses)("a gateway killed with -9 on the %s bus", (bus) => {
  let nats: { url: string; stop(): Promise<void> } | undefined;
  let web: ControlPlane;
  let gateways: ControlPlane[] = [];
  let lb: Balancer;
  let sql: postgres.Sql;
  const hosts: Host[] = [];
  /** Host i is node nodeIds[i]. */
  const nodeIds: string[] = [];
  const client = () => api(web.url);

  const nodeRows = async (): Promise<NodeRow[]> =>
    sql<NodeRow[]>`
      select n.id, n.state, n.gateway_id, n.declared_version, r.declaration_version as reported_version
      from nodes n left join latest_reports r on r.node_id = n.id
      order by n.id`;

  /** Every host has `content` in /etc/motd, and every node's report of its declared version is recorded. */
  async function everyHostApplied(content: string, which: Host[] = hosts) {
    const motdOf = (h: Host) => h.readFile("/etc/motd");
    await waitFor(
      `/etc/motd = ${JSON.stringify(content)} on ${which.length} hosts`,
      async () => {
        const wrong = which.filter((h) => motdOf(h) !== content);
        if (wrong.length === 0) return true;
        const rows = new Map((await nodeRows()).map((n) => [n.id, n]));
        const say = (h: Host) => {
          const n = rows.get(nodeIds[hosts.indexOf(h)]!);
          return `${n?.id} (${n?.state} on ${n?.gateway_id}, declared v${n?.declared_version}, reported v${n?.reported_version}) has ${JSON.stringify(motdOf(h))}`;
        };
        throw new Error(`${wrong.length} not there yet: ${wrong.map(say).join("; ")}`);
      },
      30_000,
    );
    const ids = new Set(which.map((h) => nodeIds[hosts.indexOf(h)]));
    return waitFor(
      "every report of the declared version recorded",
      async () => {
        const rows = (await nodeRows()).filter((n) => ids.has(n.id));
        return rows.length === ids.size && rows.every((n) => n.declared_version > 0 && n.reported_version === n.declared_version) ? rows : null;
      },
      30_000,
    );
  }

  beforeAll(async () => {
    const busEnv: Record<string, string> = {};
    if (bus === "nats") {
      nats = await startNatsServer();
      busEnv.MESH_BUS_URL = nats.url;
    }
    web = await ControlPlane.start({ engine: "postgres", env: { MESH_ROLE: "web", ...busEnv } });
    gateways = await Promise.all(
      [1, 2].map(() =>
        ControlPlane.start({
          engine: "postgres",
          databaseUrl: web.databaseUrl,
          // A beat a second: the dead gateway is swept at the 30 s floor, not up to 5 s later.
          env: { MESH_ROLE: "gateway", MESH_GATEWAY_HEARTBEAT_MS: "1000", ...busEnv },
        }),
      ),
    );
    // The operator's rule: the agent's paths to the gateways, everything else (enrolment) to web.
    const gatewayBackends = gateways.map((g) => backendOf(g.url));
    lb = await Balancer.start([
      { pathPrefix: AGENT_PATH, backends: gatewayBackends },
      { pathPrefix: CHALLENGE_PATH, backends: gatewayBackends },
      { pathPrefix: "", backends: [backendOf(web.url)] },
    ]);
    sql = postgres(web.databaseUrl!, { max: 2, onnotice: () => {} });
  }, 180_000);

  afterAll(async () => {
    if (process.env.MESH_E2E_KEEP_LOGS) {
      for (const [name, cp] of [
        ["web", web],
        ["gw0", gateways[0]],
        ["gw1", gateways[1]],
      ] as const)
        if (cp) fs.writeFileSync(`/tmp/failover-${bus}-${name}.log`, cp.output);
      hosts.forEach((h, i) => fs.writeFileSync(`/tmp/failover-${bus}-host${i}.log`, h.output));
    }
    await Promise.all(hosts.map((h) => h.stop()));
    for (const h of hosts) h.dispose();
    await lb?.close();
    await sql?.end();
    for (const g of gateways) await g.dispose();
    await web?.dispose();
    await nats?.stop();
  });

  it("spreads hosts enrolled and linked through the load balancer over both gateways", async () => {
    const expectedBus = bus === "nats" ? '"bus":"nats"' : '"bus":"notify"';
    for (const cp of [web, ...gateways]) expect(cp.output).toContain(expectedBus);
    const token = await client().mutate("token.create", { labels: { tier: "web" }, maxUses: HOSTS });
    for (let i = 0; i < HOSTS; i++) {
      const host = new Host(`failover-${bus}-${i}`);
      hosts.push(host);
      // Not enrol(): its spawnSync would block this process, and with it the balancer.
      const r = await host.enrolAsync(lb.url, token.token);
      expect(r.code, r.stderr).toBe(0);
      nodeIds.push(JSON.parse(fs.readFileSync(path.join(host.stateDir, "identity.json"), "utf8")).nodeId);
    }
    for (const h of hosts) h.run(1);
    const rows = await waitFor(
      "every node linked",
      async () => {
        const rows = await nodeRows();
        return rows.length === HOSTS && rows.every((n) => n.state === "enrolled" && n.gateway_id) ? rows : null;
      },
      30_000,
    );
    const held = new Set(rows.map((n) => n.gateway_id));
    expect([...held].sort()).toEqual(gateways.map(gatewayIdOf).sort());
  });

  it("pushes a change made on web to the hosts of both gateways and records their reports", async () => {
    await client().mutate("role.upsert", motd("before\n"));
    await everyHostApplied("before\n");
  });

  it("moves the killed gateway's hosts to the other, with a change committed while they had no link", async () => {
    const [dead, survivor] = gateways as [ControlPlane, ControlPlane];
    const deadId = gatewayIdOf(dead);
    const survivorId = gatewayIdOf(survivor);
    const before = await nodeRows();
    const movedIds = new Set(before.filter((n) => n.gateway_id === deadId).map((n) => n.id));
    const moved = hosts.filter((_, i) => movedIds.has(nodeIds[i]!));
    const stayed = hosts.filter((h) => !moved.includes(h));
    expect(moved.length).toBeGreaterThan(0);
    expect(stayed.length).toBeGreaterThan(0);

    // New connections wait at the balancer: the moved hosts stay without a link until release().
    lb.hold();
    const marks = new Map(moved.map((h) => [h, h.output.length]));
    await dead.kill("SIGKILL");
    await waitFor("the dead gateway's hosts saw their links drop", () => moved.every((h) => h.output.slice(marks.get(h)!).includes('"link down"')), 30_000);

    // Committed while the gateway is dead and its hosts are linked nowhere.
    await client().mutate("role.upsert", motd("while dead\n"));
    await everyHostApplied("while dead\n", stayed);
    for (const h of moved) expect(fs.readFileSync(h.file("/etc/motd"), "utf8")).toBe("before\n");

    lb.release();
    // They state their version in the auth frame; the survivor pushes the current one at link-up.
    await everyHostApplied("while dead\n");
    await waitFor(
      "every node enrolled on the surviving gateway",
      async () => (await nodeRows()).every((n) => n.state === "enrolled" && n.gateway_id === survivorId),
      30_000,
    );

    // The dead gateway's row is swept after max(6 beats, 30 s) of silence; the sweep must not
    // take the nodes that already moved.
    await waitFor("the dead gateway swept", async () => (await sql`select 1 from gateways where id = ${deadId}`).length === 0, 60_000);
    const after = await nodeRows();
    expect(after.filter((n) => n.state !== "enrolled" || n.gateway_id !== survivorId)).toEqual([]);
  });

  it("then pushes a change made on web to every host, all on the surviving gateway", async () => {
    await client().mutate("role.upsert", motd("after\n"));
    const rows = await everyHostApplied("after\n");
    const survivorId = gatewayIdOf(gateways[1]!);
    expect(rows.every((n) => n.state === "enrolled" && n.gateway_id === survivorId)).toBe(true);
  });
});
