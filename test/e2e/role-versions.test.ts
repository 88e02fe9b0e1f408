// Roles are versioned (issue 14) in a real browser against a real control plane and a real host:
// two saves with messages make two versions on the role page, the diff between them shows the
// content change, and rolling back (after a confirmation showing the diff and the plan) makes a
// third version whose old content reaches the host's file. axe-core finds nothing serious on the
// role page at desktop and phone width.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolHost } from "../harness/enrol";
import { Host } from "../harness/host";
import { desktopPage, launchBrowser } from "../harness/browser";
import { waitFor } from "../harness/wait";
import { axeFindings, DESKTOP_AND_PHONE, expectNoAxeFindings } from "../harness/axe";

const engine = engines()[0]!;

describe(`role versions in headless Chromium (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;
  const host = new Host("role-versions");
  const motd = () => host.readFile("/etc/motd");

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    await enrolHost(host, cp.url, { tier: "web" });
    host.run(1);
    browser = await launchBrowser();
    page = await desktopPage(browser, cp.url);
  });
  afterAll(async () => {
    await browser?.close();
    host.dispose();
    await cp?.dispose();
  });

  const saveInEditor = async (path: string, content: string, message: string) => {
    await page.goto(`${cp.url}${path}`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    if (path.endsWith("/edit")) {
      await page.getByLabel("Name").fill("motd");
      await page.getByLabel("Selector", { exact: false }).fill(JSON.stringify({ labels: { tier: "web" } }));
    }
    await page
      .getByRole("textbox", { name: "Resources (JSON array)" })
      .fill(JSON.stringify([{ type: "file", id: "motd", path: "/etc/motd", content, mode: "0644" }], null, 2));
    await page.getByLabel("Message", { exact: false }).fill(message);
    await page.getByTestId("role-plan").waitFor();
    await page.getByRole("button", { name: "Save and push" }).click();
    await page.waitForURL(/\/roles$/);
  };
  const versionRows = () => page.getByTestId("role-version");

  it("two saves with messages are two versions on the role page, and the diff shows the content change", async () => {
    await saveInEditor("/roles/edit", "first\n", "first cut");
    await waitFor("the host has the first content", () => motd() === "first\n", 30_000);
    await saveInEditor("/roles/edit?name=motd", "second\n", "say second");
    await waitFor("the host has the second content", () => motd() === "second\n", 30_000);

    await page.goto(`${cp.url}/roles/edit?name=motd`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    await versionRows().nth(1).waitFor();
    expect(await versionRows().count()).toBe(2);
    const [newest, oldest] = [(await versionRows().nth(0).textContent())!, (await versionRows().nth(1).textContent())!];
    expect(newest).toMatch(/v2.*current.*admin/);
    expect(newest).toContain("say second");
    expect(oldest).toContain("v1");
    expect(oldest).toContain("first cut");
    expect(oldest).not.toContain("current");

    // By default the newest against the one before it.
    const versions = page.getByRole("region", { name: "Versions" });
    await versions.getByText("Changes from v1 to v2").waitFor();
    await versions.getByTestId("diff-update").waitFor();
    await versions.getByText("content diff").click();
    const diff = (await versions.getByTestId("content-diff").textContent())!;
    expect(diff).toContain("-first");
    expect(diff).toContain("+second");
    // Either direction: from v2 to v1.
    await page.getByLabel("Compare from v2").check();
    await page.getByLabel("Compare to v1").check();
    await versions.getByText("Changes from v2 to v1").waitFor();
    await versions.getByText("content diff").click();
    await waitFor("the reversed diff", async () => ((await versions.getByTestId("content-diff").textContent()) ?? "").includes("+first"));
  });

  it("has no serious or critical axe-core violations on the role page with its versions, desktop and phone", async () => {
    const results: Record<string, string[]> = {};
    for (const { width, height } of DESKTOP_AND_PHONE) {
      await page.setViewportSize({ width, height });
      await page.goto(`${cp.url}/roles/edit?name=motd`);
      await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
      await page.getByRole("region", { name: "Versions" }).getByTestId("diff-update").waitFor();
      await page.getByRole("region", { name: "Versions" }).getByText("content diff").click();
      results[`${width} role page`] = await axeFindings(page);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expectNoAxeFindings(results);
  });

  it("rolls back after a confirmation showing the diff and the plan: a third version, and the host gets the old content back", async () => {
    await page.goto(`${cp.url}/roles/edit?name=motd`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    await versionRows().nth(1).getByRole("button", { name: "Roll back to this version (v1)" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByTestId("role-plan").waitFor();
    expect(await dialog.textContent()).toContain("Changes from v2");
    await dialog.getByTestId("diff-update").waitFor();
    expect(await dialog.getByTestId("plan-update").count()).toBe(1);
    expect(await axeFindings(page)).toEqual([]);
    // Nothing is saved before the admin confirms.
    expect((await api(cp.url).query("role.versions", { name: "motd" })).items.length).toBe(2);
    await dialog.getByRole("button", { name: "Roll back to v1" }).click();

    await waitFor("a third version", async () => (await versionRows().count()) === 3, 15_000);
    const third = (await versionRows().nth(0).textContent())!;
    expect(third).toMatch(/v3.*current/);
    expect(third).toContain("roll back to v1");
    // The editor above reloads with the content the role holds now.
    await waitFor("the editor has the old content", async () =>
      (await page.getByRole("textbox", { name: "Resources (JSON array)" }).inputValue()).includes("first\\n"),
    );
    await waitFor("the host has the old content back", () => motd() === "first\n", 30_000);
    const v3 = await api(cp.url).query("role.version", { name: "motd", version: 3 });
    expect(v3.resources).toEqual((await api(cp.url).query("role.version", { name: "motd", version: 1 })).resources);
  });
});
