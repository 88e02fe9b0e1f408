// Debian's Chromium driven by playwright-core: never a downloaded browser.
import { chromium, type Browser, type Page } from "playwright-core";
import { CHROMIUM } from "./paths";
import { ADMIN_PASSWORD } from "./control-plane";

export async function launchBrowser(): Promise<Browser> {
  // playwright gives every launch a fresh, temporary profile directory.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

export async function logIn(page: import("playwright-core").Page, baseUrl: string, password = ADMIN_PASSWORD) {
  await page.goto(`${baseUrl}/`);
  await page.waitForURL(/\/login/);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL((u) => !u.pathname.startsWith("/login"));
}

/** A page of its own context at the desktop viewport (1280 x 900), logged in at `baseUrl`. */
export async function desktopPage(browser: Browser, baseUrl: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await logIn(page, baseUrl);
  return page;
}

/** Waits until React has hydrated the page, so clicks and typing reach its handlers. */
export async function hydrated(page: import("playwright-core").Page) {
  await page.locator("html[data-hydrated=true]").waitFor({ state: "attached" });
}
