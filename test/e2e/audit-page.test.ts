// The Audit page in a real browser: filters kept in the URL (a reload shows the same view), a
// date range, an invalid range said so, the current view exported as CSV, and a role change shown as
// its diff (including the revoke-when-offline policy set in the role editor).
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { seriousViolations } from "../harness/axe";

const engine = engines()[0]!;

describe(`audit page (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    const admin = api(cp.url);
    for (const name of ["audit-a", "audit-b"])
      await admin.mutate("role.upsert", { name, resources: [{ type: "file", id: "f", path: `/etc/${name}`, content: "x\n" }] });
    await admin.mutate("token.create", {});
    browser = await launchBrowser();
    page = await (await browser.newContext({ acceptDownloads: true })).newPage();
    await logIn(page, cp.url);
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.dispose();
  });

  it("keeps every filter in the URL, says when a range is invalid, and exports the view as CSV", async () => {
    await page.goto(`${cp.url}/audit?action=role.upsert`);
    await hydrated(page);
    const rows = page.getByTestId("event-row");
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    expect(await page.getByLabel("Action", { exact: true }).inputValue()).toBe("role.upsert");

    const today = new Date();
    const day = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, "0")}-${String(today.getDate()).padStart(2, "0")}`;
    await page.getByLabel("From", { exact: true }).fill(day);
    await expect.poll(() => new URL(page.url()).searchParams.get("from"), { timeout: 20_000 }).toBe(day);
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    await page.reload();
    await hydrated(page);
    expect(await page.getByLabel("From", { exact: true }).inputValue()).toBe(day);
    expect(await page.getByLabel("Action", { exact: true }).inputValue()).toBe("role.upsert");
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);

    // A range ending before it starts is said to be invalid, not silently empty.
    await page.getByLabel("To", { exact: true }).fill("2000-01-01");
    await expect.poll(() => page.getByRole("alert").filter({ hasText: "ends before it starts" }).count()).toBe(1);
    await page.getByLabel("To", { exact: true }).fill("");

    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Export CSV" }).click();
    const file = await (await download).path();
    const csv = fs.readFileSync(file!, "utf8").trimEnd().split("\r\n");
    expect(csv[0]).toContain('"action"');
    expect(csv).toHaveLength(3);
    expect(csv.slice(1).every((l) => l.includes('"role.upsert"'))).toBe(true);
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Exported 2 events" }).count()).toBe(1);
    expect((await seriousViolations(page)).findings).toEqual([]);
  });

  it("shows what a role change changed: selector, resources and the file's content diff", async () => {
    const admin = api(cp.url);
    await admin.mutate("role.upsert", {
      name: "audit-a",
      selector: { labels: { tier: "web" } },
      resources: [
        { type: "file", id: "f", path: "/etc/audit-a", content: "y\n" },
        { type: "directory", id: "d", path: "/srv/audit-a" },
      ],
      revokeOfflineAfter: "30d",
    });
    await page.goto(`${cp.url}/audit?action=role.upsert`);
    await hydrated(page);
    await expect.poll(() => page.getByTestId("event-row").count(), { timeout: 20_000 }).toBe(3);
    // The newest row is the second save of audit-a; its button's name turns to "Hide …" once open.
    const show = page
      .getByTestId("event-row")
      .first()
      .getByRole("button", { name: /the change to audit-a$/ });
    expect(await show.innerText()).toBe("Show the change to audit-a");
    await show.click();
    const diff = page.getByTestId("role-diff");
    await expect.poll(() => diff.count()).toBe(1);
    const text = await diff.innerText();
    expect(text).toContain('+ {"labels":{"tier":"web"}}');
    expect(text).toContain("Revoke when offline: off → 30d");
    expect(text).toContain("+ d (directory path:/srv/audit-a)");
    expect(text).toContain("~ f (file path:/etc/audit-a): content");
    await diff.getByText("content diff").click();
    expect((await diff.getByTestId("content-diff").innerText()).split("\n")).toEqual(expect.arrayContaining(["-x", "+y"]));
    expect(await show.getAttribute("aria-expanded")).toBe("true");
    expect((await seriousViolations(page)).findings).toEqual([]);
  });

  it("role editor: the revoke-when-offline field is off by default, checked, saved, and its change audited", async () => {
    await page.goto(`${cp.url}/roles/edit?name=audit-b`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    const field = page.getByLabel("Revoke nodes offline longer than", { exact: false });
    expect(await field.inputValue()).toBe("");
    expect(await page.locator("#revokeOfflineAfter-help").innerText()).toContain("Nothing happens to the machine");
    await field.fill("4");
    await expect
      .poll(() =>
        page
          .getByTestId("revokeOfflineAfter-errors")
          .innerText()
          .catch(() => ""),
      )
      .toContain("at least 5 minutes");
    await field.fill("12h");
    await page.getByTestId("role-plan").waitFor();
    await page.getByRole("button", { name: "Save and push" }).click();
    await page.waitForURL(`${cp.url}/roles`);
    const roles = (await api(cp.url).query("role.list")) as Array<{ name: string; revokeOfflineAfter: number | null }>;
    expect(roles.find((r) => r.name === "audit-b")!.revokeOfflineAfter).toBe(720);
    await page.goto(`${cp.url}/audit?action=role.upsert`);
    await hydrated(page);
    await page.getByTestId("event-row").first().getByRole("button", { name: "Show the change to audit-b" }).click();
    expect(await page.getByTestId("role-diff").innerText()).toContain("Revoke when offline: off → 12h");
  });
});
