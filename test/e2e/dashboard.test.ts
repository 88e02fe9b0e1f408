// The dashboard in a real browser: log in, see the fleet, issue a token.
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { Host } from "../harness/host";
import { launchBrowser, logIn } from "../harness/browser";
import { waitFor } from "../harness/wait";

describe("dashboard in headless Chromium", () => {
  let cp: ControlPlane;
  let browser: Browser;
  const host = new Host("dashboard");

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine: engines()[0]! });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await host.stop();
    host.dispose();
    await cp?.dispose();
  });

  it("refuses a wrong password", async () => {
    const page = await browser.newPage();
    await page.goto(`${cp.url}/login`);
    await page.getByLabel("Password").fill("wrong-password");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByText("Wrong password.").waitFor();
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.close();
  });

  it("logs in, shows the node in the fleet list, and issues a token with its command", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    expect(host.enrol(cp.url, token).code).toBe(0);
    host.run(5);
    const nodeId = host.status().nodeId as string;
    await waitFor("node enrolled", async () => (await api(cp.url).query("node.get", { id: nodeId })).state === "enrolled");

    const page = await browser.newPage();
    await logIn(page, cp.url);
    const row = page.getByTestId("fleet-row");
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.first().textContent()).toContain("enrolled");

    await page.getByRole("link", { name: "Add machines" }).first().click();
    await page.waitForURL(/\/machines/);
    await page.getByRole("button", { name: "Issue token" }).click();
    const command = page.getByTestId("enrol-command");
    await command.waitFor();
    expect(await command.textContent()).toMatch(/^printf '%s\\n' [a-z0-9]{6}\.[a-z0-9]{24} \| mesh-host enrol http:\/\/127\.0\.0\.1:\d+ --token - --insecure$/);

    await page.getByRole("link", { name: "Fleet" }).click();
    await row.first().getByRole("link").click();
    await page.waitForURL(/\/nodes\//);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(os.hostname());
    await page.close();
  });
});
