// Issue 13 in a real browser against a real control plane and real hosts: a host that fails a
// resource is shown failing in the Fleet (health, counters, beside its version), filters are kept in
// the URL (and an invalid one is shown invalid), the view exports as CSV, a node is renamed, and
// axe-core finds nothing serious on the Fleet and node pages at desktop and phone width.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolHost } from "../harness/enrol";
import { Host } from "../harness/host";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { axeFindings, DESKTOP_AND_PHONE, expectNoAxeFindings } from "../harness/axe";
import { waitFor } from "../harness/wait";

const engine = engines()[0]!;

describe(`fleet health and filters (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  const good = new Host("health-good");
  const bad = new Host("health-bad");
  const idle = new Host("health-idle");
  const ids = { good: "", bad: "", idle: "" };

  const enrol = (host: Host, labels: Record<string, string>) => enrolHost(host, cp.url, labels);

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    browser = await launchBrowser();
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    for (const h of [good, bad]) fs.mkdirSync(h.file("/srv"), { recursive: true });
    // A file where the role wants a directory: the bad host cannot write /srv/blocked/app.conf.
    fs.writeFileSync(bad.file("/srv/blocked"), "not a directory\n");
    await api(cp.url).mutate("role.upsert", {
      name: "web",
      selector: { labels: { tier: "web" } },
      resources: [{ type: "file", id: "motd", path: "/srv/motd", content: "managed by mesh\n", mode: "0644" }],
    });
    await api(cp.url).mutate("role.upsert", {
      name: "zone-b",
      selector: { labels: { zone: "b" } },
      resources: [{ type: "file", id: "app-conf", path: "/srv/blocked/app.conf", content: "port=8080\n", mode: "0644" }],
    });
    ids.good = await enrol(good, { tier: "web", zone: "a" });
    ids.bad = await enrol(bad, { tier: "web", zone: "b" });
    // Enrolled, never run: never linked.
    ids.idle = await enrol(idle, { tier: "db" });
    good.run(1);
    bad.run(1);
    await waitFor("the good host applied", () => fs.existsSync(good.file("/srv/motd")), 30_000);
    page = await admin.newPage();
    await logIn(page, cp.url);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    for (const h of [good, bad, idle]) {
      await h.stop();
      h.dispose();
    }
    await cp?.dispose();
  });

  const row = (id: string) => page.getByTestId("fleet-row").filter({ has: page.locator(`a[href="/nodes/${id}"]`) });

  it("shows the host that failed a resource as failing in the list, its version marked failed, and counts it", async () => {
    await page.goto(`${cp.url}/`);
    await hydrated(page);
    await row(ids.bad).locator('[data-health="failing"]').waitFor({ timeout: 30_000 });
    expect(await row(ids.bad).getByTestId("version-failure").textContent()).toMatch(/1 failed/);
    await row(ids.good).locator('[data-health="healthy"]').waitFor({ timeout: 30_000 });
    expect(await row(ids.idle).getByTestId("node-health").textContent()).toBe("pending");
    expect(await row(ids.good).getByTestId("version-failure").count()).toBe(0);
    await waitFor("counters", async () => (await page.getByTestId("health-count-failing").textContent()) === "1", 10_000);
    expect(await page.getByTestId("health-count-healthy").textContent()).toBe("1");
    expect(await page.getByTestId("health-count-pending").textContent()).toBe("1");
    // Three machines with one hostname: told apart by their short ids.
    expect(await row(ids.bad).getByTestId("short-id").textContent()).toBe(ids.bad.slice(0, 8));
    // The node page says the same.
    await page.goto(`${cp.url}/nodes/${ids.bad}`);
    await page.locator('[data-testid="node-health"][data-health="failing"]').waitFor();
    await page.getByTestId("last-checked").waitFor();
    expect(await page.getByTestId("last-changed").textContent()).not.toMatch(/never/);
  });

  it("keeps every filter in the URL, across a reload, and shows an invalid one as invalid", async () => {
    await page.goto(`${cp.url}/`);
    await hydrated(page);
    await page.getByTestId("labels-filter").fill("tier=web, zone=b");
    await page.waitForURL((u) => u.searchParams.get("labels") === "tier=web, zone=b");
    await page.getByTestId("health-filter").selectOption("failing");
    await page.waitForURL((u) => u.searchParams.get("health") === "failing");
    await waitFor("one row", async () => (await page.getByTestId("fleet-row").count()) === 1, 10_000);
    expect(await page.getByTestId("fleet-row").first().locator(`a[href="/nodes/${ids.bad}"]`).count()).toBe(1);

    await page.reload();
    await hydrated(page);
    expect(await page.getByTestId("labels-filter").inputValue()).toBe("tier=web, zone=b");
    expect(await page.getByTestId("health-filter").inputValue()).toBe("failing");
    await waitFor("one row after reload", async () => (await page.getByTestId("fleet-row").count()) === 1, 10_000);

    // The export is the view: every matching node, as CSV.
    const href = (await page.getByTestId("export-csv").getAttribute("href"))!;
    const csv = await page.evaluate(async (h) => (await fetch(h)).text(), href);
    const lines = csv.trimEnd().split("\r\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(ids.bad);
    expect(lines[1]).toContain(`,"failing",`);

    await page.getByTestId("labels-filter").fill("tier=web, =b");
    await page.getByTestId("invalid-filter").waitFor();
    expect(await page.getByTestId("labels-filter").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByTestId("labels-filter-error").textContent()).toMatch(/"=b": a label key is missing/);
    expect(await page.getByTestId("fleet-row").count()).toBe(0);
    await page.waitForURL((u) => u.searchParams.get("labels") === "tier=web, =b");

    // An invalid value arriving by URL is shown as such too, never dropped.
    await page.goto(`${cp.url}/?health=sick`);
    await hydrated(page);
    await page.getByTestId("invalid-filter").waitFor();
    expect(await page.getByTestId("invalid-filter").textContent()).toMatch(/"sick" is not a health/);
  });

  it("renames a node from its page: the new name in the page and the Fleet, the hostname kept", async () => {
    await page.goto(`${cp.url}/nodes/${ids.good}`);
    await hydrated(page);
    const hostname = (await page.getByTestId("node-name").textContent())!.trim();
    await page.getByRole("button", { name: /^Rename / }).click();
    await page.getByLabel(/Display name/).fill("web-edge-1");
    await page.getByRole("button", { name: "Save name" }).click();
    await waitFor("renamed", async () => (await page.getByTestId("node-name").textContent())?.trim() === "web-edge-1", 10_000);
    expect(await page.getByText(`hostname ${hostname}`).count()).toBe(1);
    const events = await api(cp.url).query("event.list", { nodeId: ids.good, action: "node.rename" });
    expect(events.items[0].data).toMatchObject({ to: "web-edge-1", hostname });
    await page.goto(`${cp.url}/?q=edge`);
    await hydrated(page);
    await waitFor("renamed in the list", async () => (await row(ids.good).textContent())?.includes("web-edge-1") ?? false, 10_000);
    expect(await page.getByTestId("fleet-row").count()).toBe(1);
  });

  it("has no serious or critical axe-core violations on the Fleet and node pages, desktop and phone", async () => {
    const results: Record<string, string[]> = {};
    for (const { width, height } of DESKTOP_AND_PHONE) {
      await page.setViewportSize({ width, height });
      for (const path of ["/", "/?health=failing&labels=tier%3Dweb", "/?labels=%3Dbad", `/nodes/${ids.bad}`, `/nodes/${ids.idle}`]) {
        await page.goto(`${cp.url}${path}`);
        await hydrated(page);
        await page.getByRole("heading", { level: 1 }).waitFor();
        await page.waitForLoadState("networkidle").catch(() => {});
        results[`${width} ${path}`] = await axeFindings(page);
      }
    }
    expectNoAxeFindings(results);
  });
});
