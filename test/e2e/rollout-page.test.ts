// Staged rollout from the role page (issue 14) in a real browser against a real control plane and
// three real hosts: v1 saved all at once; v2 saved staged from the editor (canary 1, waves of 1) is
// watched wave by wave to completed; v3 with a file under a missing parent directory halts at the
// canary, the page shows the halt and its reason while the other hosts keep v2; Roll back (after a
// confirmation) gives the canary v2's content back; a host not reached names the rollout on its node page. The page also shows the versions, their diff and
// the plan with a content diff. axe-core finds nothing serious with a halted rollout, desktop and phone.
import fs from "node:fs";
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
const motdFile = (content: string) => ({ type: "file", id: "motd", path: "/etc/motd", content, mode: "0644" });

describe(`staged rollout on the role page in headless Chromium (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;
  const hosts = [new Host("rollout-page-a"), new Host("rollout-page-b"), new Host("rollout-page-c")];
  const motd = (h: Host) => h.readFile("/etc/motd");
  const motds = () => hosts.map(motd);

  beforeAll(async () => {
    // A quick worker tick: waves follow each other within a second once their nodes reported.
    cp = await ControlPlane.start({ engine, env: { MESH_ROLLOUT_INTERVAL_MS: "300" } });
    for (const h of hosts) {
      await enrolHost(h, cp.url, { tier: "web" });
      h.run(1);
    }
    browser = await launchBrowser();
    page = await desktopPage(browser, cp.url);
  });
  afterAll(async () => {
    await browser?.close();
    for (const h of hosts) h.dispose();
    await cp?.dispose();
  });

  const openEditor = async (path: string) => {
    await page.goto(`${cp.url}${path}`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
  };
  const fillResources = async (resources: unknown[]) => {
    await page.getByRole("textbox", { name: "Resources (JSON array)" }).fill(JSON.stringify(resources, null, 2));
    await page.getByTestId("role-plan").waitFor();
  };
  const save = () => page.getByRole("button", { name: "Save and push" }).click();
  const detail = () => page.getByTestId("rollout-detail");
  const waveCells = async (testId: string) => detail().getByTestId(testId).allTextContents();

  it("saves v1 all at once: no rollout, every host has it", async () => {
    await openEditor("/roles/edit");
    await page.getByLabel("Name").fill("motd");
    await page.getByLabel("Selector", { exact: false }).fill(JSON.stringify({ labels: { tier: "web" } }));
    await fillResources([motdFile("first\n")]);
    // A role without a policy is offered the recommended one, in words.
    expect(await page.getByTestId("rollout-words").textContent()).toBe("canary 1 node, then 10 % at a time, halt at 5 % failures");
    await page.getByRole("radio", { name: /^All at once/ }).check();
    await save();
    await page.waitForURL(/\/roles$/);
    await waitFor("every host has v1", () => motds().every((m) => m === "first\n"), 30_000);
    expect((await api(cp.url).query("rollout.list", { role: "motd" })).items).toEqual([]);
  });

  it("saves v2 staged from the editor (canary 1, waves of 1) and the page shows the waves going to completed", async () => {
    await openEditor("/roles/edit?name=motd");
    // The plan of an edit carries the content diff.
    await fillResources([motdFile("second\n")]);
    await page.getByTestId("plan-update").first().waitFor();
    await page.getByTestId("role-plan").getByText("content diff").first().click();
    expect(await page.getByTestId("role-plan").getByTestId("content-diff").first().textContent()).toContain("+second");

    expect(await page.getByRole("radio", { name: /^Staged/ }).isChecked()).toBe(true);
    await page.getByRole("button", { name: "Change the rollout settings" }).click();
    await page.getByLabel("Later waves by").selectOption("size");
    await page.getByLabel("Wave nodes").fill("1");
    expect(await page.getByTestId("rollout-words").textContent()).toBe("canary 1 node, then 1 node at a time, halt at 5 % failures");
    await page.getByLabel("Make this the role's default").check();
    await save();
    // A staged save is watched on the role's page.
    await page.waitForURL(/\/roles\/edit\?name=motd#rollouts$/);
    await detail().waitFor();
    expect(await detail().textContent()).toMatch(/Started by admin.*plan reaching 3 nodes/);
    await waitFor("the rollout completed on the page", async () => (await detail().getAttribute("data-state")) === "completed", 60_000);
    expect(await detail().getByTestId("rollout-wave").count()).toBe(3);
    expect(await waveCells("wave-applied")).toEqual(["1", "1", "1"]);
    expect(await waveCells("wave-pending")).toEqual(["0", "0", "0"]);
    await waitFor("every host has v2", () => motds().every((m) => m === "second\n"), 30_000);
    // The choice was stored as the role's default.
    const stored = (await api(cp.url).query("role.list")).find((r: { name: string }) => r.name === "motd");
    expect(stored.rolloutPolicy).toMatchObject({ mode: "staged", canary: { count: 1 }, waves: { size: 1 } });
  });

  it("v3 with a file under a missing parent halts at the canary: the page shows why, the other hosts keep v2", async () => {
    await openEditor("/roles/edit?name=motd");
    // The role's stored default is preselected now.
    expect(await page.getByTestId("rollout-words").textContent()).toBe("canary 1 node, then 1 node at a time, halt at 5 % failures");
    await page.getByText("The role's default policy.").waitFor();
    await fillResources([motdFile("third\n"), { type: "file", id: "orphan", path: "/nonexistent-dir/x", content: "x\n", mode: "0644" }]);
    await save();
    await page.waitForURL(/#rollouts$/);
    await waitFor("the rollout halted on the page", async () => (await page.getByTestId("rollout-detail").getAttribute("data-state")) === "halted", 60_000);
    const halt = page.getByTestId("rollout-halt");
    expect(await halt.getAttribute("role")).toBe("alert");
    expect(await halt.getByTestId("rollout-halt-reason").textContent()).toMatch(/canary/i);
    expect(await waveCells("wave-failed")).toEqual(["1", "0", "0"]);
    // The canary got v3's file and failed the orphan; the rest never got v3.
    const canary = hosts.find((h) => motd(h) === "third\n");
    expect(canary, JSON.stringify(motds())).toBeDefined();
    expect(fs.existsSync(canary!.file("/nonexistent-dir/x"))).toBe(false);
    await new Promise((r) => setTimeout(r, 2000));
    expect(hosts.filter((h) => h !== canary).map(motd)).toEqual(["second\n", "second\n"]);
    // A host not reached yet says on its node page which rollout holds it back.
    const waiting = hosts.find((h) => h !== canary)!;
    await page.goto(`${cp.url}/nodes/${waiting.status().nodeId as string}`);
    const pins = page.getByTestId("node-rollout-pins");
    await pins.waitFor();
    expect(await pins.textContent()).toMatch(/motd.*stays at v2 until the rollout to v3 reaches this node.*halted/);
    await openEditor("/roles/edit?name=motd");
    await page.getByTestId("rollout-halt").waitFor();
    expect(await detail().getByRole("button", { name: "Continue past halt" }).isVisible()).toBe(true);
    expect(await detail().getByRole("button", { name: "Roll back", exact: true }).isVisible()).toBe(true);
  });

  it("has no serious or critical axe-core violations on the role page with a halted rollout, desktop and phone", async () => {
    const results: Record<string, string[]> = {};
    for (const { width, height } of DESKTOP_AND_PHONE) {
      await page.setViewportSize({ width, height });
      await openEditor("/roles/edit?name=motd");
      await page.getByTestId("rollout-halt").waitFor();
      await page.getByRole("region", { name: "Versions" }).getByTestId("diff-update").first().waitFor();
      results[`${width} role page, halted rollout`] = await axeFindings(page);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expectNoAxeFindings(results);
  });

  it("rolls back after a confirmation: the canary gets v2's content back, the versions list the rollback", async () => {
    await openEditor("/roles/edit?name=motd");
    await page.getByTestId("rollout-halt").waitFor();
    const canary = hosts.find((h) => motd(h) === "third\n")!;
    await detail().getByRole("button", { name: "Roll back", exact: true }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.getByTestId("rollout-confirm").textContent()).toMatch(/v2.*content of motd.*1 node already changed/);
    expect(await axeFindings(page)).toEqual([]);
    await dialog.getByRole("button", { name: "Roll back to v2" }).click();
    await waitFor("the canary has v2's content back", () => motd(canary) === "second\n", 60_000);
    expect(motds()).toEqual(["second\n", "second\n", "second\n"]);
    // The rolled-back rollout and its rollback are listed; the versions list the new one.
    await waitFor(
      "the rolled-back rollout listed",
      async () => (await page.locator('[data-testid="rollout-row"][data-state="rolled-back"]').count()) === 1,
      15_000,
    );
    await waitFor("a fourth version", async () => (await page.getByTestId("role-version").count()) === 4, 15_000);
    expect(await page.getByTestId("role-version").nth(0).textContent()).toMatch(/v4.*current/);
    const v4 = await api(cp.url).query("role.version", { name: "motd", version: 4 });
    expect(v4.resources).toEqual((await api(cp.url).query("role.version", { name: "motd", version: 2 })).resources);
  });
});
