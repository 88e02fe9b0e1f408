// `npm run screenshots`: a real control plane with two real hosts and a role,
// and a PNG of every dashboard page (laptop width, and the fleet and a node at
// phone width) in docs/screenshots/. Needs `npm run build` first.
import fs from "node:fs";
import path from "node:path";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { REPO } from "../harness/paths";
import { waitFor } from "../harness/wait";

const OUT = path.join(REPO, "docs/screenshots");
const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const cp = await ControlPlane.start({ engine: engines()[0]! });
  const hosts = [new Host("shot-web"), new Host("shot-db")];
  const browser = await launchBrowser();
  try {
    const client = api(cp.url);
    const ids: string[] = [];
    for (const [i, h] of hosts.entries()) {
      fs.mkdirSync(h.file("/srv"), { recursive: true });
      const { token } = await client.mutate("token.create", { labels: { tier: i === 0 ? "web" : "db", zone: "a" } });
      if (h.enrol(cp.url, token).code !== 0) throw new Error("enrol failed");
      h.run(1);
      ids.push(h.status().nodeId);
    }
    await client.mutate("role.upsert", {
      name: "web",
      selector: { labels: { tier: "web" } },
      resources: [
        { type: "directory", id: "site", path: "/srv/site", mode: "0755" },
        { type: "file", id: "index", path: "/srv/site/index.html", content: "<h1>hello</h1>\n", mode: "0644", onDrift: "report" },
      ],
    });
    await waitFor("role applied", () => fs.existsSync(hosts[0]!.file("/srv/site/index.html")), 30_000);
    fs.writeFileSync(hosts[0]!.file("/srv/site/index.html"), "edited by hand\n");
    await waitFor("drift reported", async () => (await client.query("node.get", { id: ids[0] })).driftCount > 0, 30_000);
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
    await shot("fleet");
    await page.goto(`${cp.url}/nodes/${ids[0]}`);
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
    await resources.fill(JSON.stringify([{ type: "file", id: "motd", path: "/etc/motd", content: "web node\n", mode: "0644" }], null, 2));
    await page.getByTestId("plan-remove").first().waitFor().catch(async (err) => {
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
    await page.goto(`${cp.url}/nodes/${ids[0]}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
    await shot("node-phone");
  } finally {
    await browser.close();
    for (const h of hosts) {
      await h.stop();
      h.dispose();
    }
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
