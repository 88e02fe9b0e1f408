// The dashboard of issue 5 in a real browser against a real control plane and real
// hosts: enrol from the Add machines page, roles with a plan, drift, retire, revoke,
// a viewer, the CSRF refusals, and axe-core on every page.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ADMIN_PASSWORD, ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { axeFindings } from "../harness/axe";
import { sessionCookieFor } from "../harness/session";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;
const VIEWER = { name: "vera", password: "viewer-password-1" };

describe(`dashboard pages (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  let admin: BrowserContext;
  let fleet: Page;
  const hostA = new Host("pages-a");
  const hostB = new Host("pages-b");
  let nodeA = "";
  let nodeB = "";

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    browser = await launchBrowser();
    admin = await browser.newContext();
  });
  afterAll(async () => {
    await browser?.close();
    for (const h of [hostA, hostB]) {
      await h.stop();
      h.dispose();
    }
    await cp?.dispose();
  });

  it("issues a token on Add machines, enrols a real host with it, and the node appears on the open fleet page without a reload", async () => {
    fleet = await admin.newPage();
    await logIn(fleet, cp.url);
    await fleet.getByText("No machines yet").waitFor();
    await fleet.evaluate(() => ((window as unknown as { stillHere: boolean }).stillHere = true));

    const machines = await admin.newPage();
    await machines.goto(`${cp.url}/machines`);
    await hydrated(machines);
    await machines.getByLabel("Labels for the new nodes").fill("tier=web");
    await machines.getByRole("button", { name: "Issue token" }).click();
    const command = (await machines.getByTestId("enrol-command").textContent())!;
    // The token is fed on standard input by printf (a shell builtin), so it is in no process's argv.
    expect(command).toMatch(/^printf '%s\\n' [a-z0-9]{6}\.[a-z0-9]{24} \| mesh-host enrol http:\/\/127\.0\.0\.1:\d+ --token - --insecure$/);
    expect(await machines.getByTestId("install-command").textContent()).toMatch(/^curl -fsSL http:\/\/127\.0\.0\.1:\d+\/download\/install\.sh \| sh$/);
    await machines.getByTestId("token-status").filter({ hasText: "unused" }).first().waitFor();

    // Run exactly the command shown, with sh (mesh-host is the harness's sandboxed host).
    fs.mkdirSync(hostA.file("/srv"), { recursive: true });
    const enrolled = hostA.shell(command);
    expect(enrolled.code, enrolled.stderr + enrolled.stdout).toBe(0);
    hostA.run(1);
    nodeA = hostA.status().nodeId;

    const row = fleet.getByTestId("fleet-row");
    await row.first().waitFor({ timeout: 15_000 });
    await fleet.getByTestId("fleet-row").filter({ hasText: "enrolled" }).waitFor({ timeout: 15_000 });
    expect(await row.first().textContent()).toContain("tier=web");
    expect(await fleet.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
    // The token is now used, by that node.
    await machines.getByTestId("token-status").filter({ hasText: "used" }).first().waitFor();
    await machines.close();
  });

  it("plans a role in the editor (errors at the field first), saves it, and the host applies its files", async () => {
    const page = await admin.newPage();
    await page.goto(`${cp.url}/roles/edit`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    await page.getByLabel("Name").fill("web");
    await page.getByLabel("Selector", { exact: false }).fill(JSON.stringify({ labels: { tier: "web" } }));
    await page.getByLabel("Resources", { exact: false }).fill(JSON.stringify([{ type: "file", id: "index" }]));
    await page.getByTestId("resources-errors").waitFor();
    expect(await page.getByRole("button", { name: "Save and push" }).isDisabled()).toBe(true);

    const resources = [
      { type: "directory", id: "site", path: "/srv/site", mode: "0755" },
      { type: "file", id: "index", path: "/srv/site/index.html", content: "<h1>hello</h1>\n", mode: "0644", onDrift: "report" },
    ];
    await page.getByLabel("Resources", { exact: false }).fill(JSON.stringify(resources, null, 2));
    await page.getByTestId("role-plan").waitFor();
    await waitFor("plan lists two creations", async () => (await page.getByTestId("plan-create").count()) === 2);
    expect(await page.getByTestId("plan-matched").textContent()).toBe("1");
    await page.getByRole("button", { name: "Save and push" }).click();
    await page.waitForURL(/\/roles$/);
    await page.getByTestId("role-row").filter({ hasText: "web" }).waitFor();
    await waitFor(
      "file applied on the host",
      () => fs.existsSync(hostA.file("/srv/site/index.html")) && fs.readFileSync(hostA.file("/srv/site/index.html"), "utf8") === "<h1>hello</h1>\n",
      20_000,
    );

    // The node page shows each declared resource applied.
    await page.goto(`${cp.url}/nodes/${nodeA}`);
    await waitFor("both resources applied", async () => (await page.getByTestId("resource-status").filter({ hasText: "applied" }).count()) === 2, 15_000);
    await page.close();
  });

  it("shows the drift badge on the fleet page when a file is changed on the host", async () => {
    await fleet.getByTestId("fleet-row").filter({ hasText: "web" }).waitFor();
    expect(await fleet.getByTestId("drift-badge").count()).toBe(0);
    fs.writeFileSync(hostA.file("/srv/site/index.html"), "changed by hand\n");
    await fleet.getByTestId("drift-badge").waitFor({ timeout: 20_000 });
    expect(await fleet.getByTestId("drift-badge").textContent()).toContain("1 drifted");
    const page = await admin.newPage();
    await page.goto(`${cp.url}/nodes/${nodeA}`);
    await page.getByTestId("resource-status").filter({ hasText: "drifted" }).waitFor();
    await page.close();
  });

  it("retires a node with a confirmation and follows it live until retired", async () => {
    const page = await admin.newPage();
    await page.goto(`${cp.url}/nodes/${nodeA}`);
    await hydrated(page);
    await page.getByRole("button", { name: "Retire" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Retire node" }).click();
    await page
      .getByTestId("node-state")
      .filter({ hasText: /retiring|retired/ })
      .waitFor({ timeout: 10_000 });
    await page.getByTestId("node-state").filter({ hasText: "retired" }).waitFor({ timeout: 30_000 });
    expect(fs.existsSync(hostA.file("/srv/site/index.html"))).toBe(false);
    await page.close();
  });

  it("revokes another node only once its name is typed", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    expect(hostB.enrol(cp.url, token).code).toBe(0);
    hostB.run(1);
    nodeB = hostB.status().nodeId;
    const name = (await api(cp.url).query("node.get", { id: nodeB })).name as string;
    const page = await admin.newPage();
    await page.goto(`${cp.url}/nodes/${nodeB}`);
    await page.getByTestId("node-state").filter({ hasText: "enrolled" }).waitFor({ timeout: 15_000 });
    await hydrated(page);
    await page.getByRole("button", { name: "Revoke" }).click();
    const dialog = page.getByRole("dialog");
    const confirm = dialog.getByRole("button", { name: "Revoke node" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type .* to confirm/).fill(name);
    await confirm.click();
    await page.getByTestId("node-state").filter({ hasText: "revoked" }).waitFor({ timeout: 10_000 });
    expect((await api(cp.url).query("node.get", { id: nodeB })).state).toBe("revoked");
    await page.close();
  });

  it("shows a viewer no mutation buttons, and the API tells the viewer FORBIDDEN", async () => {
    await api(cp.url).mutate("user.create", { ...VIEWER, role: "viewer" });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${cp.url}/login`);
    await page.getByLabel("User name").fill(VIEWER.name);
    await page.getByLabel("Password").fill(VIEWER.password);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL((u) => !u.pathname.startsWith("/login"));
    await page.getByTestId("fleet-row").first().waitFor();
    for (const path of ["/", "/machines", "/roles", `/nodes/${nodeB}`, `/nodes/${nodeA}`]) {
      await page.goto(`${cp.url}${path}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      for (const name of ["Issue token", "Retire", "Revoke", "Delete", "Edit", "New role", "Edit labels"]) {
        expect(await page.getByRole("button", { name, exact: true }).count(), `${name} on ${path}`).toBe(0);
      }
      expect(await page.getByRole("link", { name: /New role|Edit/ }).count()).toBe(0);
    }
    const refused = await page.evaluate(async () => {
      const r = await fetch("/api/trpc/token.create", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      return { status: r.status, body: await r.json() };
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.data.code).toBe("FORBIDDEN");
    await context.close();
  });

  it("refuses a mutation without a session, with a wrong Origin, or sent as text/plain", async () => {
    const cookie = await sessionCookieFor(cp.url, "admin", ADMIN_PASSWORD);
    const post = (headers: Record<string, string>) => fetch(`${cp.url}/api/trpc/token.create`, { method: "POST", headers, body: "{}" });
    const json = { "content-type": "application/json" };
    expect((await post({ ...json, origin: cp.url })).status).toBe(401);
    expect((await post({ ...json, cookie, origin: "http://evil.example" })).status).toBe(403);
    expect((await post({ ...json, cookie })).status).toBe(403);
    expect((await post({ "content-type": "text/plain", cookie, origin: cp.url })).status).toBe(415);
    // The same request done right is accepted: the refusals above are the checks, not a broken route.
    expect((await post({ ...json, cookie, origin: cp.url })).status).toBe(200);
    // A script with an API key sends no Origin, and that is fine.
    expect((await post({ ...json, authorization: "Bearer e2e-admin-api-key-0123456789" })).status).toBe(200);
  });

  it("has no serious or critical axe-core violations on any page", async () => {
    const page = await admin.newPage();
    const results: Record<string, string[]> = {};
    const pages = ["/login", "/", `/nodes/${nodeA}`, `/nodes/${nodeB}`, "/machines", "/roles", "/roles/edit?name=web", "/audit", "/access", "/account"];
    for (const path of pages) {
      if (path === "/login") {
        const anon = await browser.newPage();
        await anon.goto(`${cp.url}/login`);
        results[path] = await axeFindings(anon);
        await anon.close();
        continue;
      }
      await page.goto(`${cp.url}${path}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      await page.waitForLoadState("networkidle").catch(() => {});
      results[path] = await axeFindings(page);
    }
    console.log("axe-core serious/critical violations per page:", JSON.stringify(results, null, 2));
    expect(results).toEqual(Object.fromEntries(pages.map((p) => [p, []])));
    await page.close();
  });
});
