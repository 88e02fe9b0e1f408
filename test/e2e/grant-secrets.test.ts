// Grant secrets (issue 10, items 4 and 10), for real: a host receives a working
// database credential for its grant; no API response, page, declaration row or log
// line carries the password; an unrelated role change keeps the same credential.
import fs from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresDatabase } from "@mesh/db/testing";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { sessionCookieFor } from "../harness/session";
import { waitFor } from "../harness/wait";

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;
const engine = engines()[0]!;
const CREDENTIAL_FILE = "/etc/shop/db.env";
const shopDir = { type: "directory", id: "shop-dir", path: "/etc/shop", mode: "0755" };

withPostgres(`grant secrets (${engine})`, () => {
  let cp: ControlPlane;
  let host: Host;
  let target: { url: string; drop(): Promise<void> };
  let nodeId: string;
  let password: string;
  let url: string;
  const sessions: postgres.Sql[] = [];
  const client = () => api(cp.url);

  beforeAll(async () => {
    target = await createPostgresDatabase("mesh_grant_e2e");
    const admin = postgres(target.url, { max: 1, onnotice: () => {} });
    await admin`create table orders (id int primary key, item text)`;
    await admin`insert into orders values (1, 'tea')`;
    await admin.end();
    cp = await ControlPlane.start({ engine, env: { MESH_GRANT_POSTGRES_URL: target.url } });
    host = new Host("grants");
  });
  afterAll(async () => {
    for (const s of sessions) await s.end({ timeout: 1 }).catch(() => {});
    await host?.stop();
    host?.dispose();
    await cp?.dispose();
    const admin = postgres(target.url, { max: 1, onnotice: () => {} });
    for (const { rolname } of await admin<{ rolname: string }[]>`select rolname from pg_roles where rolname like 'mesh\\_%'`) {
      await admin.unsafe(`drop owned by ${rolname}`).catch(() => {});
      await admin.unsafe(`drop role ${rolname}`).catch(() => {});
    }
    await admin.end();
    await target?.drop();
  });

  it("gives the host a working credential for its grant", async () => {
    const token = await client().mutate("token.create", { labels: { app: "shop" } });
    expect(host.enrol(cp.url, token.token).code).toBe(0);
    nodeId = host.status().nodeId;
    host.run(1);
    await client().mutate("role.upsert", {
      name: "shop",
      selector: { labels: { app: "shop" } },
      resources: [shopDir],
      grants: [{ id: "shop-db", provider: "postgres", path: CREDENTIAL_FILE }],
    });
    const content = await waitFor(
      "the credential file",
      () => fs.existsSync(host.file(CREDENTIAL_FILE)) && fs.readFileSync(host.file(CREDENTIAL_FILE), "utf8"),
      60_000,
    );
    expect((fs.statSync(host.file(CREDENTIAL_FILE)).mode & 0o777).toString(8)).toBe("600");
    url = /^DATABASE_URL=(.*)$/m.exec(content)![1]!;
    password = decodeURIComponent(new URL(url).password);
    expect(password.length).toBeGreaterThan(20);
    const session = postgres(url, { max: 1, onnotice: () => {} });
    sessions.push(session);
    expect(await session`select item from orders`).toEqual([{ item: "tea" }]);
  });

  it("shows the password in no API response, no page, no declaration row and no log line", async () => {
    const viewer = await client().mutate("apiKey.create", { name: "auditor", role: "viewer" });
    await client().mutate("user.create", { name: "viewer1", role: "viewer", password: "viewer-password-1" });
    const cookie = await sessionCookieFor(cp.url, "viewer1", "viewer-password-1");
    await waitFor("the host's report", async () => (await client().query("node.get", { id: nodeId })).report !== null);

    const responses: string[] = [];
    for (const c of [client(), api(cp.url, viewer.key)]) {
      responses.push(JSON.stringify(await c.query("node.get", { id: nodeId })));
      responses.push(JSON.stringify(await c.query("node.list")));
      responses.push(JSON.stringify(await c.query("event.list", { limit: 200 })));
      responses.push(JSON.stringify(await c.query("role.list")));
    }
    responses.push(
      JSON.stringify(
        await client().mutate("role.plan", {
          name: "shop",
          selector: {},
          resources: [shopDir],
          grants: [{ id: "shop-db", provider: "postgres", path: CREDENTIAL_FILE }],
        }),
      ),
    );
    const viaSession = await fetch(`${cp.url}/api/trpc/node.get?input=${encodeURIComponent(JSON.stringify({ id: nodeId }))}`, { headers: { cookie } });
    expect(viaSession.status).toBe(200);
    responses.push(await viaSession.text());
    const page = await fetch(`${cp.url}/nodes/${nodeId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    responses.push(await page.text());
    for (const body of responses) {
      expect(body).not.toContain(password);
      expect(body).not.toContain("DATABASE_URL");
    }
    // The node page shows the grant, as a reference.
    expect(responses[0]).toMatch(/mesh-grant:shop-db:sha256:[0-9a-f]{64}/);

    const db = postgres(cp.databaseUrl ?? process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      if (cp.databaseUrl) {
        const rows = await db<{ resources: string }[]>`select resources::text as resources from declaration_bodies`;
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) expect(row.resources).not.toContain(password);
        const [grant] = await db<{ secret: string }[]>`select secret from grants`;
        expect(grant!.secret).toMatch(/^mesh-sealed-v1\./);
        expect(grant!.secret).not.toContain(password);
        const events = await db<{ data: string }[]>`select data::text as data from events`;
        for (const e of events) expect(e.data).not.toContain(password);
      }
    } finally {
      await db.end();
    }
    expect(cp.output).not.toContain(password);
  });

  it("keeps the same credential when an unrelated role changes", async () => {
    const before = await client().query("node.get", { id: nodeId });
    await client().mutate("role.upsert", {
      name: "other",
      selector: { labels: { app: "other" } },
      resources: [{ type: "file", id: "motd", path: "/etc/motd", content: "hi\n" }],
    });
    await client().mutate("role.upsert", { name: "everyone", resources: [{ type: "directory", id: "srv", path: "/srv" }] });
    await waitFor(
      "the new declaration applied",
      async () => {
        const n = await client().query("node.get", { id: nodeId });
        return n.declaredVersion > before.declaredVersion && n.appliedVersion === n.declaredVersion && fs.existsSync(host.file("/srv"));
      },
      60_000,
    );
    expect(fs.readFileSync(host.file(CREDENTIAL_FILE), "utf8")).toBe(`DATABASE_URL=${url}\n`);
    const issued = await client().query("event.list", { action: "grant.issue", nodeId });
    expect(issued.items).toHaveLength(1);
    expect(await sessions[0]!`select item from orders`).toEqual([{ item: "tea" }]);
  });
});
