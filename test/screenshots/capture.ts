// `npm run screenshots`: a real control plane with real hosts in every kind of trouble (healthy,
// drifted, failing, conflicted, stale; test/harness/troubled-fleet.ts) and roles, and a PNG of every
// dashboard page (laptop width, and the fleet and a node at phone width) in docs/screenshots/.
// Needs `npm run build` first.
import fs from "node:fs";
import path from "node:path";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { troubledFleet } from "../harness/troubled-fleet";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { REPO } from "../harness/paths";

const OUT = path.join(REPO, "docs/screenshots");
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const cp = await ControlPlane.start({ engine: engines()[0]! });
  const browser = await launchBrowser();
  let fleet: Awaited<ReturnType<typeof troubledFleet>> | undefined;
  try {
    const client = api(cp.url);
    fleet = await troubledFleet(cp, "shot");
    const ids = fleet.ids;
    await client.mutate("token.create", { labels: { tier: "db" }, maxUses: 5 });
    await client.mutate("user.create", { name: "vera", role: "viewer", password: "viewer-password-1" });

    const context = await browser.newContext({ viewport: LAPTOP });
    const page = await context.newPage();
    const shot = async (name: string) => {
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
      console.log(`docs/screenshots/${name}.png`);
    };
    await page.goto(`${cp.url}/login`);
    await shot("login");
    await logIn(page, cp.url);
    await page.getByTestId("fleet-row").first().waitFor();
    await page
      .getByTestId("fleet-row")
      .filter({ has: page.locator('[data-health="stale"]') })
      .waitFor();
    await shot("fleet");
    await page.goto(`${cp.url}/nodes/${ids.drifted}`);
    await page.getByTestId("resource-status").filter({ hasText: "drifted" }).waitFor({ timeout: 20_000 });
    await shot("node");
    await page.goto(`${cp.url}/machines`);
    await hydrated(page);
    await page.getByLabel("Labels for the new nodes").fill("tier=web, zone=b");
    await page.getByRole("button", { name: "Issue token" }).click();
    await page.getByTestId("enrol-command").waitFor();
    await shot("add-machines");
    await page.goto(`${cp.url}/roles`);
    await page.getByTestId("role-row").first().waitFor();
    await shot("roles");
    await page.goto(`${cp.url}/roles/edit?name=web`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    const resources = page.getByLabel("Resources", { exact: false });
    await resources.fill(JSON.stringify([{ type: "file", id: "robots", path: "/srv/site/robots.txt", content: "User-agent: *\n", mode: "0644" }], null, 2));
    await page
      .getByTestId("plan-remove")
      .first()
      .waitFor()
      .catch(async (err) => {
        throw new Error(`${err.message}\n${await page.locator("main").innerText()}`);
      });
    await shot("role-editor");
    await page.goto(`${cp.url}/audit`);
    await page.getByTestId("event-row").first().waitFor();
    await shot("audit");
    await page.goto(`${cp.url}/access`);
    await page.getByTestId("user-row").first().waitFor();
    await shot("users-and-keys");
    await page.setViewportSize(PHONE);
    await page.goto(`${cp.url}/`);
    await page.getByTestId("fleet-card").first().waitFor();
    await shot("fleet-phone");
    await page.goto(`${cp.url}/nodes/${ids.drifted}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
    await shot("node-phone");
  } finally {
    await browser.close();
    await fleet?.dispose();
    await cp.dispose();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
