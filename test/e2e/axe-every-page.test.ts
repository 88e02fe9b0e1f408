// Issue 13's "no serious or critical axe-core violations on every page at desktop and phone width",
// checked in one place: every page under apps/web/src/app, with real data (a fleet with a healthy,
// a drifted, a failing, a conflicted and a stale host; roles; a token issued; a webhook with
// deliveries; a viewer and an API key), at 1280x800 and 390x844, as an admin and as a viewer.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { axeFindings } from "../harness/axe";
import { troubledFleet, type TroubledFleet } from "../harness/troubled-fleet";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;
const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];
const VIEWER = { name: "vera", password: "viewer-password-1" };

describe(`axe-core on every page (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  let fleet: TroubledFleet;
  let receiver: http.Server;
  let delivered = 0;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        delivered++;
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    cp = await ControlPlane.start({ engine, env: { MESH_ALERT_INTERVAL_MS: "200" } });
    const client = api(cp.url);
    await client.mutate("alert.create", {
      name: "on-call",
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/mesh`,
      events: ["enrolled", "failing", "drifted", "conflicted", "offline"],
      offlineMinutes: 5,
    });
    fleet = await troubledFleet(cp, "axe");
    await client.mutate("token.create", { labels: { tier: "db" }, maxUses: 5 });
    await client.mutate("user.create", { ...VIEWER, role: "viewer" });
    await client.mutate("apiKey.create", { name: "ci-reader", role: "viewer" });
    await waitFor("webhook deliveries", () => delivered > 0, 30_000);
    browser = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await fleet?.dispose();
    await cp?.dispose();
    await new Promise((r) => receiver?.close(r));
  });

  /** Waits for an element in the DOM (a table row is hidden at phone width, where cards show). */
  const present = (selector: string) => (page: Page) => page.locator(selector).first().waitFor({ state: "attached" });
  const findings = async (page: Page) => {
    const found = await axeFindings(page);
    if (found.length) console.log(`${page.viewportSize()?.width} ${new URL(page.url()).pathname}:`, found);
    return found;
  };

  /** Opens a page and waits until it shows its data (hydrated, heading, `ready` if given, network quiet). */
  async function visit(page: Page, path: string, ready?: (page: Page) => Promise<unknown>) {
    await page.goto(`${cp.url}${path}`);
    // Pages in the dashboard's frame mark hydration (its nav does); the bare not-found page has none.
    if (await page.locator("main#main").count()) await hydrated(page);
    await page.getByRole("heading", { level: 1 }).first().waitFor();
    await ready?.(page);
    await page.waitForLoadState("networkidle").catch(() => {});
  }

  /** Fails with every finding of the views, by width and path: an empty record is the pass. */
  const expectClean = (results: Record<string, string[]>) => {
    const failed = Object.fromEntries(Object.entries(results).filter(([, f]) => f.length));
    console.log(`axe-core on ${Object.keys(results).length} page views; serious/critical:`, JSON.stringify(failed, null, 2));
    expect(failed).toEqual({});
  };

  for (const viewport of WIDTHS) {
    const at = `${viewport.width}`;

    it(`finds nothing serious or critical on the login page and every admin page at ${at} px`, async () => {
      const { ids } = fleet;
      const results: Record<string, string[]> = {};
      const anon = await browser.newContext({ viewport });
      const login = await anon.newPage();
      await login.goto(`${cp.url}/login`);
      results[`${at} /login`] = await findings(login);
      await login.goto(`${cp.url}/login?error=wrong`);
      results[`${at} /login?error=wrong`] = await findings(login);
      await anon.close();

      const admin = await browser.newContext({ viewport });
      const page = await admin.newPage();
      await logIn(page, cp.url);
      const pages: Array<[string, ((p: Page) => Promise<unknown>)?]> = [
        ["/", present('[data-health="conflicted"]')],
        ["/?health=failing&labels=tier%3Dweb", present('[data-health="failing"]')],
        ["/?labels=%3Dbad", present('[data-testid="invalid-filter"]')],
        ...(["drifted", "failing", "conflicted", "stale", "healthy"] as const).map(
          (kind) => [`/nodes/${ids[kind]}`, present(`[data-testid="node-health"][data-health="${kind}"]`)] as [string, (p: Page) => Promise<unknown>],
        ),
        ["/roles", present('[data-testid="role-row"]')],
        ["/roles/edit", present('[data-testid="role-form"][data-ready="true"]')],
        ["/roles/edit?name=web", present('[data-testid="role-form"][data-ready="true"]')],
        ["/access", present('[data-testid="user-row"]')],
        ["/account"],
        ["/alerts", (p) => p.getByText("on-call").first().waitFor({ state: "attached" })],
        ["/audit", present('[data-testid="event-row"]')],
        ["/no-such-page"],
        ["/nodes/00000000-0000-4000-8000-000000000000"],
      ];
      for (const [path, ready] of pages) {
        await visit(page, path, ready);
        results[`${at} ${path}`] = await findings(page);
      }
      // Add machines, with a token just issued (its command shown) and the token list filled.
      await visit(page, "/machines", present('[data-testid="token-status"]'));
      await page.getByLabel("Labels for the new nodes").fill("tier=web, zone=c");
      await page.getByRole("button", { name: "Issue token" }).click();
      await page.getByTestId("enrol-command").waitFor();
      results[`${at} /machines (token issued)`] = await findings(page);
      await admin.close();
      expectClean(results);
    }, 300_000);

    it(`finds nothing serious or critical on what a viewer sees at ${at} px, and admins-only pages say so`, async () => {
      const { ids } = fleet;
      const results: Record<string, string[]> = {};
      const viewer = await browser.newContext({ viewport });
      const vpage = await viewer.newPage();
      await vpage.goto(`${cp.url}/login`);
      await vpage.getByLabel("User name").fill(VIEWER.name);
      await vpage.getByLabel("Password").fill(VIEWER.password);
      await vpage.getByRole("button", { name: "Log in" }).click();
      await vpage.waitForURL((u) => !u.pathname.startsWith("/login"));
      for (const path of ["/", `/nodes/${ids.drifted}`, "/roles", "/machines", "/access", "/roles/edit", "/alerts", "/audit", "/account"]) {
        await visit(vpage, path);
        // A page only admins use says so to a viewer, never "Not found".
        if (["/access", "/roles/edit", "/alerts"].includes(path))
          expect(await vpage.getByRole("heading", { level: 1 }).textContent(), path).toBe("Admins only");
        results[`${at} viewer ${path}`] = await findings(vpage);
      }
      await viewer.close();
      expectClean(results);
    }, 300_000);
  }
});
