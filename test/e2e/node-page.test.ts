// Issue 13's node-page and keyboard items in headless Chromium against a real control plane: the node
// page names the roles that match the node and which role each declared resource came from, shows
// sizes in human units and how the host was installed, scrolls its declaration table as a focusable region on a phone; focus lands on
// the install command after "Issue token" and in the field after the labels "Edit", and Escape cancels
// the editor back to Edit; a viewer is offered no "Add machines"; a dark system theme gives a dark page
// with nothing serious for axe-core. The node is a hand-made enrolment (harness/link.ts): what is
// asserted is the dashboard, not a host.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { hydrated, launchBrowser, logIn } from "../harness/browser";
import { axeFindings, seriousViolations } from "../harness/axe";
import { enrolRaw, inventory, keyPair, profile } from "../harness/link";

const MEMORY = 16_747_003_904; // 15.6 GiB
const DISK = 250 * 1024 ** 3;
const VIEWER = { name: "nadia", password: "viewer-password-1" };

describe("the node page and keyboard focus in headless Chromium", () => {
  let cp: ControlPlane;
  let browser: Browser;
  let page: Page;
  let nodeId = "";

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine: engines()[0]! });
    browser = await launchBrowser();
    const admin = api(cp.url);
    await admin.mutate("role.upsert", {
      name: "base",
      resources: [{ type: "file", id: "motd", path: "/etc/motd", content: "managed by mesh\n", mode: "0644" }],
    });
    await admin.mutate("role.upsert", {
      name: "web",
      selector: { labels: { tier: "web" } },
      resources: [
        { type: "file", id: "app-conf", path: "/srv/app/a-path-long-enough-to-scroll-sideways-on-a-phone/app.conf", content: "port=8080\n", mode: "0644" },
      ],
    });
    await admin.mutate("role.upsert", {
      name: "db",
      selector: { labels: { tier: "db" } },
      resources: [{ type: "package", id: "postgres", name: "postgresql" }],
    });
    const { token } = await admin.mutate("token.create", { labels: { tier: "web" } });
    const r = await enrolRaw(cp.url, {
      token,
      publicKey: keyPair().publicKey,
      profile: { ...profile("0123456789abcdef"), memoryBytes: MEMORY, diskBytes: DISK, hostInstall: "deb" },
      inventory,
    });
    expect(r.status).toBe(201);
    nodeId = r.body.nodeId;
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await logIn(page, cp.url);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.dispose();
  });

  const openNode = async (p: Page = page) => {
    await p.goto(`${cp.url}/nodes/${nodeId}`);
    await hydrated(p);
    await p.getByTestId("declared-resource").first().waitFor();
  };

  it("lists the roles that match the node, linked, and which role each declared resource came from", async () => {
    await openNode();
    const roles = page.getByTestId("node-roles").getByRole("link");
    expect(await roles.allTextContents()).toEqual(["base", "web"]);
    expect(await roles.first().getAttribute("href")).toBe("/roles#role-base");
    const roleOf = async (id: string) =>
      (await page.getByTestId("declared-resource").filter({ hasText: id }).getByTestId("resource-role").textContent())?.trim();
    expect(await roleOf("motd")).toBe("base");
    expect(await roleOf("app-conf")).toBe("web");
    // The link lands on the role in the list.
    await roles.nth(1).click();
    await page.waitForURL(/\/roles#role-web$/);
    await page.locator("#role-web").waitFor();
  });

  it("shows memory and disk in human units, the exact bytes in the title", async () => {
    await openNode();
    const profileList = page.getByTestId("profile");
    const text = await profileList.textContent();
    expect(text).toContain("15.6 GiB");
    expect(text).toContain("250 GiB");
    expect(text).not.toContain(String(MEMORY));
    expect(await profileList.getByText("15.6 GiB").getAttribute("title")).toBe(`${MEMORY.toLocaleString("en-GB")} bytes`);
  });

  it("says how the host was installed and so how it is upgraded (the profile's hostInstall)", async () => {
    await openNode();
    expect((await page.getByTestId("profile").getByTestId("host-install").textContent())?.trim()).toBe(
      "deb: the mesh-host package: upgraded by a package resource (apt, from the mesh's repository)",
    );
  });

  it("scrolls the declaration table sideways on a phone as a named region the keyboard reaches", async () => {
    const phone = await browser.newPage({ viewport: { width: 375, height: 812 } });
    await logIn(phone, cp.url);
    await openNode(phone);
    const region = phone.getByRole("region", { name: /Declared resources/ });
    expect(await region.getAttribute("tabindex")).toBe("0");
    expect(await region.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await region.focus();
    await phone.keyboard.press("ArrowRight");
    await phone.waitForFunction(() => (document.activeElement?.scrollLeft ?? 0) > 0);
    const { findings } = await seriousViolations(phone);
    expect(findings).toEqual([]);
    await phone.close();
  });

  it("puts focus in the labels field on Edit; Escape cancels the edit and gives focus back to Edit", async () => {
    await openNode();
    await page.getByRole("button", { name: "Edit labels" }).click();
    const field = page.getByLabel("Labels (key=value, comma separated)");
    await page.waitForFunction(() => document.activeElement?.tagName === "INPUT");
    expect(await field.evaluate((el) => el === document.activeElement)).toBe(true);
    await field.fill("tier=db");
    await page.keyboard.press("Escape");
    await field.waitFor({ state: "detached" });
    await page.waitForFunction(() => document.activeElement?.getAttribute("aria-label") === "Edit labels");
    // Cancelled: nothing saved.
    expect((await api(cp.url).query("node.get", { id: nodeId })).labels).toEqual({ tier: "web" });
  });

  it("moves focus to the install command once a token is issued", async () => {
    await page.goto(`${cp.url}/machines`);
    await hydrated(page);
    await page.getByRole("button", { name: "Issue token" }).click();
    const install = page.getByTestId("install-command");
    await install.waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute("data-testid") === "install-command");
    expect(await install.getAttribute("aria-label")).toBe("Install command");
  });

  it("offers a viewer no Add machines button on the Fleet", async () => {
    await api(cp.url).mutate("user.create", { ...VIEWER, role: "viewer" });
    const context = await browser.newContext();
    const viewer = await context.newPage();
    await viewer.goto(`${cp.url}/login`);
    await viewer.getByLabel("User name").fill(VIEWER.name);
    await viewer.getByLabel("Password").fill(VIEWER.password);
    await viewer.getByRole("button", { name: "Log in" }).click();
    await viewer.waitForURL((u) => !u.pathname.startsWith("/login"));
    await viewer.getByTestId("fleet-row").first().waitFor();
    expect(await viewer.getByRole("main").getByRole("link", { name: "Add machines" }).count()).toBe(0);
    // An admin still has it.
    await page.goto(`${cp.url}/`);
    await page.getByTestId("fleet-row").first().waitFor();
    expect(await page.getByRole("main").getByRole("link", { name: "Add machines" }).count()).toBe(1);
    await context.close();
  });

  it("follows a dark system theme: a dark page, and nothing serious for axe-core", async () => {
    const context = await browser.newContext({ colorScheme: "dark", viewport: { width: 1280, height: 900 } });
    const dark = await context.newPage();
    await logIn(dark, cp.url);
    const results: Record<string, string[]> = {};
    for (const path of ["/", `/nodes/${nodeId}`, "/machines", "/roles"]) {
      await dark.goto(`${cp.url}${path}`);
      await hydrated(dark);
      await dark.getByRole("heading", { level: 1 }).waitFor();
      if (path.startsWith("/nodes")) await dark.getByTestId("declared-resource").first().waitFor();
      const background = await bodyBackground(dark);
      expect(luminance(background), `${path} background rgb(${background.join(", ")})`).toBeLessThan(0.05);
      results[path] = await axeFindings(dark);
    }
    expect(results).toEqual({ "/": [], [`/nodes/${nodeId}`]: [], "/machines": [], "/roles": [] });
    // Light is still light.
    await page.goto(`${cp.url}/`);
    expect(luminance(await bodyBackground(page))).toBeGreaterThan(0.9);
    await context.close();
  });
});

/** The body's background as sRGB bytes: Chromium computes colours as lab()/oklch(), so a canvas converts them. */
function bodyBackground(p: Page): Promise<[number, number, number]> {
  return p.evaluate(() => {
    const ctx = document.createElement("canvas").getContext("2d")!;
    ctx.fillStyle = getComputedStyle(document.body).backgroundColor;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
    return [r!, g!, b!] as [number, number, number];
  });
}

/** Relative luminance (WCAG) of sRGB bytes. */
function luminance(rgb: [number, number, number]): number {
  const lin = rgb.map((byte) => {
    const c = byte / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * lin[0]! + 0.7152 * lin[1]! + 0.0722 * lin[2]!;
}
