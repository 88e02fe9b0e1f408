// The database unreachable under a running control plane (issue 12, item 2): the control plane
// reaches its own Postgres through a TCP proxy the test controls. With packets dropped
// (blackhole) or the server stopped, every request that needs the database ends with 503 and a
// Retry-After, never SQL, and the dashboard says the database is unreachable; once the database
// answers again, the same process serves again. Asserts what the caller sees, never how long it took.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import postgres from "postgres";
import { ADMIN_API_KEY, ADMIN_PASSWORD, type ControlPlane } from "../harness/control-plane";
import { api } from "../harness/api";
import { launchBrowser, logIn } from "../harness/browser";
import { connectFake, enrolFake, inventory, keyPair, profile, type FakeHost } from "../harness/link";
import type { PrivatePostgres } from "../harness/private-postgres";
import type { TcpProxy } from "../harness/tcp-proxy";
import { startProxiedControlPlane, type ProxiedControlPlane } from "../harness/proxied-postgres";
import { waitFor } from "../harness/wait";

const SQL_TEXT = /\b(select|insert|update|delete)\b|Failed query|params:|"nodes"|"sessions"/i;

describe("the database unreachable", () => {
  let db: ProxiedControlPlane;
  let pg: PrivatePostgres;
  let proxy: TcpProxy;
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;
  let host: FakeHost;

  const listNodes = () => fetch(`${cp.url}/api/trpc/node.list`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}` } });
  const createToken = () =>
    fetch(`${cp.url}/api/trpc/token.create`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_API_KEY}`, "content-type": "application/json" },
      body: "{}",
    });
  const login = () =>
    fetch(`${cp.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: ADMIN_PASSWORD }) });
  const enrol = (token: string) =>
    fetch(`${cp.url}/api/enrol`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, publicKey: keyPair().publicKey, profile: profile(crypto.randomUUID().replace(/-/g, "")), inventory }),
    });

  /** A 503 that says when to come back and carries no SQL. */
  async function expectUnavailable(res: Response) {
    const text = await res.text();
    expect(res.status, text).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(text).toMatch(/database/i);
    expect(text).not.toMatch(SQL_TEXT);
  }

  async function expectLinkRefused() {
    const refused = await connectFake(cp.url, host).then(
      (ws) => {
        ws.close();
        return null;
      },
      (err: { status?: number; headers?: Record<string, string> }) => err,
    );
    expect(refused?.status).toBe(503);
    expect(Number(refused?.headers?.["retry-after"])).toBeGreaterThan(0);
  }

  beforeAll(async () => {
    db = await startProxiedControlPlane();
    ({ pg, proxy, cp } = db);
    const { token } = await api(cp.url).mutate("token.create", {});
    host = await enrolFake(cp.url, token);
    browser = await launchBrowser();
    page = await browser.newPage();
    await logIn(page, cp.url);
  });
  afterAll(async () => {
    await browser?.close();
    await db?.dispose();
  });

  it("packets dropped: tRPC, enrolment, links and the dashboard answer that the database is unreachable; then serve again", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    proxy.setMode("blackhole");

    await expectUnavailable(await listNodes());
    await expectUnavailable(await createToken());
    await expectUnavailable(await enrol(token));
    await expectUnavailable(await login());
    await expectLinkRefused();
    await page.goto(`${cp.url}/`);
    await page.getByRole("heading", { name: "The database is unreachable" }).waitFor();
    expect(await page.content()).not.toMatch(/Failed query|params:/);

    proxy.setMode("pass");
    // Straight to the database, past the proxy: when the outage ended, by the database's clock.
    const direct = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const passedAt = (await direct<{ now: Date }[]>`select now()`)[0]!.now;
      await waitFor("tRPC to answer again", async () => (await listNodes()).status === 200, 60_000, 500);
      expect((await enrol(token)).status).toBe(201);
      expect((await login()).status).toBe(200);
      // A background loop that met the dead connection ended its turn and goes on: the gateway beats again.
      await waitFor(
        "the gateway's heartbeat after the outage",
        async () => (await direct<{ n: number }[]>`select count(*)::int as n from gateways where heartbeat_at > ${passedAt}`)[0]!.n > 0,
        60_000,
        500,
      );
    } finally {
      await direct.end();
    }
    (await connectFake(cp.url, host)).close();
    await page.getByRole("button", { name: "Try again" }).click();
    await page.getByTestId("fleet-row").first().waitFor();
  });

  it("server stopped (connections refused): the same answers, and the same process serves once it is back", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    pg.stop("fast");
    try {
      await expectUnavailable(await listNodes());
      await expectUnavailable(await createToken());
      await expectUnavailable(await enrol(token));
      await expectLinkRefused();
      await page.goto(`${cp.url}/`);
      await page.getByRole("heading", { name: "The database is unreachable" }).waitFor();
    } finally {
      pg.start();
    }
    await waitFor("tRPC to answer again", async () => (await listNodes()).status === 200, 60_000, 500);
    expect((await enrol(token)).status).toBe(201);
    await page.reload();
    await page.getByTestId("fleet-row").first().waitFor();
  });
});
