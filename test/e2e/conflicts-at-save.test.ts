// Issue 13 in a real browser: a role save or a label edit that would put a node into conflict
// is refused with the conflict named (resource, roles, nodes), and goes through once the admin
// confirms; the label editor shows the plan before saving; the role editor shows no error
// before the user types, explains the fields from the schema, and diffs updated file content.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { ControlPlane, engines } from "../harness/control-plane";
import { api, ApiError } from "../harness/api";
import { enrolHost } from "../harness/enrol";
import { Host } from "../harness/host";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { waitFor } from "../harness/wait";
import { axeFindings } from "../harness/axe";

const engine = engines()[0]!;

describe(`conflicts caught at save (${engine})`, () => {
  let cp: ControlPlane;
  let browser: Browser;
  let admin: BrowserContext;
  const web = new Host("conflict-web");
  const db = new Host("conflict-db");
  let webNode = { id: "", name: "" };
  let dbNode = { id: "", name: "" };

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
    for (const [host, tier] of [
      [web, "web"],
      [db, "db"],
    ] as const) {
      await enrolHost(host, cp.url, { tier });
    }
    const nodeOf = async (host: Host) => {
      const id = host.status().nodeId as string;
      return { id, name: (await api(cp.url).query("node.get", { id })).name as string };
    };
    webNode = await nodeOf(web);
    dbNode = await nodeOf(db);
    await api(cp.url).mutate("role.upsert", { name: "base", resources: [{ type: "file", id: "motd", path: "/etc/motd", content: "base\n" }] });
    browser = await launchBrowser();
    admin = await browser.newContext();
    await logIn(await admin.newPage(), cp.url);
  });
  afterAll(async () => {
    await browser?.close();
    for (const h of [web, db]) h.dispose();
    await cp?.dispose();
  });

  const roleNames = async () => ((await api(cp.url).query("role.list")) as Array<{ name: string }>).map((r) => r.name);

  it("refuses a conflicting role save over the API, naming the conflict", async () => {
    const err = await api(cp.url)
      .mutate("role.upsert", {
        name: "web",
        selector: { labels: { tier: "web" } },
        resources: [{ type: "file", id: "motd", path: "/etc/motd", content: "web\n" }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect((err as ApiError).message).toContain(`motd is declared differently by roles base and web on 1 node (${webNode.name})`);
    expect((err as ApiError).body.error.data.details.conflicts[0]).toMatchObject({ key: "motd", roles: ["base", "web"], nodes: 1 });
    expect(await roleNames()).toEqual(["base"]);
  });

  it("role editor: no errors before typing, field help from the schema; a conflicting save is refused with the conflict named, and saved once confirmed", async () => {
    const page = await admin.newPage();
    await page.goto(`${cp.url}/roles/edit`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    // An empty name is invalid, but nothing has been typed yet: no error is shown.
    expect(await page.locator('[data-testid$="-errors"]').count()).toBe(0);
    await page.getByText("Help: resource types, onDrift, selector operators").click();
    expect(await page.getByTestId("help-ondrift").textContent()).toContain("report leaves it and reports it as drift");
    expect(await page.getByTestId("help-type-symlink").textContent()).toContain("target");
    expect(await page.getByTestId("role-help").textContent()).toContain('{ "notIn": [a, b] }');

    await page.getByLabel("Name").fill("web");
    await page.getByLabel("Selector", { exact: false }).fill(JSON.stringify({ labels: { tier: "web" } }));
    // The author's key order is kept as typed.
    const resources = `[\n  { "path": "/etc/motd", "type": "file", "id": "motd", "content": "web\\n" }\n]`;
    await page.getByLabel("Resources", { exact: false }).fill(resources);
    await page.getByTestId("role-plan").waitFor();
    await page.getByRole("button", { name: "Save and push" }).click();
    const refusal = page.getByTestId("conflict-refusal");
    await refusal.waitFor();
    const text = (await refusal.textContent())!;
    expect(text).toContain("this would put 1 node into conflict");
    expect(text).toContain("motd is declared differently by roles base and web on 1 node");
    expect(text).toContain(webNode.name);
    expect(await page.getByLabel("Resources", { exact: false }).inputValue()).toBe(resources);
    expect(await roleNames()).toEqual(["base"]);
    // The refusal, the help and the plan open: no serious or critical axe-core violation.
    expect(await axeFindings(page)).toEqual([]);

    await refusal.getByRole("button", { name: /Save anyway/ }).click();
    await page.waitForURL(/\/roles$/);
    expect(await roleNames()).toEqual(["base", "web"]);
    expect((await api(cp.url).query("node.get", { id: webNode.id })).conflicts).toEqual([{ key: "motd", roles: ["base", "web"] }]);

    // Reopened, the role reads as its author wrote it: their key order, no defaults added.
    await page.goto(`${cp.url}/roles/edit?name=web`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    expect(await page.getByLabel("Resources", { exact: false }).inputValue()).toBe(JSON.stringify(JSON.parse(resources), null, 2));
    await page.close();
  });

  it("label editor: shows the plan before saving, refuses labels that add a conflict, and saves them once confirmed", async () => {
    const page = await admin.newPage();
    await page.goto(`${cp.url}/nodes/${dbNode.id}`);
    await hydrated(page);
    await page.getByRole("button", { name: "Edit labels" }).click();
    const input = page.getByLabel("Labels (key=value, comma separated)");
    await input.fill("tier=web, zone=a");
    await waitFor("plan shows web gained", async () =>
      (
        (await page
          .getByTestId("labels-plan-roles")
          .textContent()
          .catch(() => "")) ?? ""
      ).includes("gains web"),
    );
    expect(await page.getByTestId("labels-plan-conflicts").textContent()).toContain("motd (roles base and web)");
    await page.getByRole("button", { name: "Save labels" }).click();
    const refusal = page.getByTestId("conflict-refusal");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain(`motd is declared differently by roles base and web on 1 node: ${dbNode.name}`);
    expect((await api(cp.url).query("node.get", { id: dbNode.id })).labels).toEqual({ tier: "db" });
    expect(await axeFindings(page)).toEqual([]);
    await refusal.getByRole("button", { name: /Save anyway/ }).click();
    await waitFor(
      "labels saved",
      async () => JSON.stringify((await api(cp.url).query("node.get", { id: dbNode.id })).labels) === JSON.stringify({ tier: "web", zone: "a" }),
    );
    await page.close();
  });

  it("role editor: an updated file's content diff is in the plan", async () => {
    const page = await admin.newPage();
    await page.goto(`${cp.url}/roles/edit?name=base`);
    await page.locator('[data-testid="role-form"][data-ready="true"]').waitFor();
    await page
      .getByLabel("Resources", { exact: false })
      .fill(JSON.stringify([{ type: "file", id: "motd", path: "/etc/motd", content: "base\nmore\n" }], null, 2));
    await page.getByTestId("plan-update").first().waitFor();
    await page.getByText("content diff").first().click();
    const diff = (await page.getByTestId("content-diff").first().textContent())!;
    expect(diff).toContain("@@ -1,1 +1,2 @@");
    expect(diff).toContain("+more");
    expect(await axeFindings(page)).toEqual([]);
    await page.close();
  });
});
