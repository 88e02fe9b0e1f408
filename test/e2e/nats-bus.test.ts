// Scale-out on the NATS change bus: two gateway instances and one web instance on one
// Postgres; a role changed through web reaches hosts linked to either gateway.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { startNatsServer } from "@mesh/db/testing";
import { ControlPlane } from "../harness/control-plane";
import { api } from "../harness/api";
import { connectFake, enrolFake, type FakeHost } from "../harness/link";
import { waitFor } from "../harness/wait";

interface Declaration {
  version: number;
  resources: Array<{ id: string }>;
}

/** Every declaration frame a link receives, in order. */
function declarationsOf(ws: WebSocket): Declaration[] {
  const seen: Declaration[] = [];
  ws.on("message", (data) => {
    const frame = JSON.parse(String(data)) as { type: string; declaration?: Declaration };
    if (frame.type === "declaration") seen.push(frame.declaration!);
  });
  return seen;
}

describe.skipIf(!process.env.DATABASE_URL)("two gateways and one web instance on the NATS bus", () => {
  let nats: { url: string; stop(): Promise<void> };
  let web: ControlPlane;
  let gateways: ControlPlane[] = [];
  const links: WebSocket[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    web = await ControlPlane.start({ engine: "postgres", env: { MESH_ROLE: "web", MESH_BUS_URL: nats.url } });
    gateways = await Promise.all(
      [1, 2].map(() => ControlPlane.start({ engine: "postgres", databaseUrl: web.databaseUrl, env: { MESH_ROLE: "gateway", MESH_BUS_URL: nats.url } })),
    );
  });
  afterAll(async () => {
    for (const l of links) l.terminate();
    for (const g of gateways) await g.dispose();
    await web?.dispose();
    await nats?.stop();
  });

  it("pushes a role.upsert made on web to hosts linked to both gateways", async () => {
    expect(web.output).toContain('"bus":"nats"');
    const client = api(web.url);
    const token = await client.mutate("token.create", { labels: { tier: "web" }, maxUses: 4 });
    const hosts: FakeHost[] = [];
    for (let i = 0; i < 4; i++) hosts.push(await enrolFake(web.url, token.token));
    const received = await Promise.all(
      hosts.map(async (h, i) => {
        const ws = await connectFake(gateways[i % 2]!.url, h);
        links.push(ws);
        return declarationsOf(ws);
      }),
    );
    // a linked node is "enrolled", an unlinked one "disconnected"
    await waitFor("every node linked", async () => {
      const { items } = await client.query("node.list");
      return items.length === 4 && items.every((n: { state: string }) => n.state === "enrolled");
    });

    await client.mutate("role.upsert", {
      name: "base",
      selector: { labels: { tier: "web" } },
      resources: [{ type: "file", id: "motd", path: "/etc/motd", content: "over nats\n", mode: "0644" }],
    });
    for (const seen of received) {
      const declaration = await waitFor("the role's declaration on the link", () => seen.find((d) => d.resources.some((r) => r.id === "motd")));
      expect(declaration.version).toBeGreaterThan(0);
    }
    // with MESH_BUS_URL set nothing calls pg_notify, so the gateways can only have heard it on NATS
    for (const g of gateways) expect(g.output).toContain('"bus":"nats"');
  });
});
