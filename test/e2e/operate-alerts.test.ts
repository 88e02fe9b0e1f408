// Alerts (issue 13), in a real browser against a real control plane: an admin adds a webhook on the
// Alerts page and copies its secret (shown once); a host enrols; a local receiver gets one delivery whose
// signature checks out with that secret, and the page's delivery log shows it delivered. A receiver that
// answers 500 is retried (with backoff), and its log shows each failed attempt.
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { ControlPlane } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolFake } from "../harness/link";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { seriousViolations } from "../harness/axe";
import { waitFor } from "../harness/wait";
import { webhookReceiver, type WebhookReceiver } from "../harness/webhook-receiver";

describe("alerts in the dashboard", () => {
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;
  let ok: WebhookReceiver;
  let broken: WebhookReceiver;

  beforeAll(async () => {
    ok = await webhookReceiver(204);
    broken = await webhookReceiver(500);
    cp = await ControlPlane.start({
      engine: process.env.DATABASE_URL ? "postgres" : "pglite",
      env: { MESH_ALERT_INTERVAL_MS: "200", MESH_ALERT_RETRY_BASE_MS: "300" },
    });
    browser = await launchBrowser();
    page = await browser.newPage();
    await logIn(page, cp.url);
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.dispose();
    await ok?.close();
    await broken?.close();
  });

  async function addWebhook(name: string, url: string): Promise<string> {
    await page.goto(`${cp.url}/alerts`);
    await hydrated(page);
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("URL").fill(url);
    // Only "Enrolled": uncheck the defaults.
    for (const label of ["Offline longer than N minutes", "Failing (a report with errors)"]) await page.getByLabel(label).uncheck();
    await page.getByLabel("Enrolled").check();
    await page.getByRole("button", { name: "Add webhook" }).click();
    const secret = (await page.getByTestId("webhook-secret").textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    return secret;
  }

  it("delivers an enrolment to a webhook added on the page, signed with its secret, and logs it", async () => {
    const secret = await addWebhook("on-call", ok.url);
    // Reached from the main navigation.
    await expect(page.getByRole("link", { name: "Alerts" }).getAttribute("aria-current")).resolves.toBe("page");
    const { token } = await api(cp.url).mutate("token.create", {});
    const host = await enrolFake(cp.url, token);
    const delivery = await waitFor("the enrolment delivered", () => ok.got.find((d) => d.event === "enrolled"), 30_000);
    const expected = `sha256=${createHmac("sha256", secret).update(delivery.body).digest("hex")}`;
    expect(delivery.signature).toBe(expected);
    const body = JSON.parse(delivery.body);
    expect(body).toMatchObject({ type: "mesh.alert", event: "enrolled", count: 1 });
    expect(body.nodes[0].id).toBe(host.nodeId);

    const log = page.getByRole("region", { name: "Delivery log of on-call" });
    await expect(
      log
        .getByTestId("delivery-attempt")
        .first()
        .textContent({ timeout: 15_000 })
        .then((t) => t),
    ).resolves.toMatch(/enrolled.*delivered \(204\)/);
    expect((await seriousViolations(page)).findings).toEqual([]);
    // And at phone width.
    await page.setViewportSize({ width: 390, height: 844 });
    expect((await seriousViolations(page)).findings).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("retries a receiver that fails, and shows each failed attempt", async () => {
    await addWebhook("broken", broken.url);
    await page.getByRole("button", { name: "Send test to webhook broken" }).click();
    await waitFor("two attempts at the broken receiver", () => broken.got.length >= 2, 30_000);
    const log = page.getByRole("region", { name: "Delivery log of broken" });
    await waitFor("two failed attempts in the log", async () => (await log.getByText("failed (500)").count()) >= 2, 15_000);
    expect(await log.getByText("HTTP 500").count()).toBeGreaterThanOrEqual(2);
    // The same body, every attempt.
    expect(new Set(broken.got.map((d) => d.body)).size).toBe(1);
  });
});
