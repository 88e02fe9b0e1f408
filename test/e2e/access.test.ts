// Accounts against a real control plane over HTTP: failed logins and enrolments
// cannot lock anyone out from elsewhere, a password change or a new admin setting
// ends old sessions, a rotated key is refused, and the change-password form works.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { ADMIN_API_KEY, ADMIN_PASSWORD, ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { enrolRaw, inventory, keyPair, profile } from "../harness/link";
import { sessionCookieFor } from "../harness/session";
import { hydrated, launchBrowser } from "../harness/browser";
import { sleep } from "../harness/wait";

const engine = engines()[0]!;
// Linux routes all of 127/8 to the loopback: a client bound to 127.0.0.2 is another address.
const ATTACKER = "127.0.0.2";

/** POSTs JSON from a chosen local address; the control plane sees it as the peer. */
function postFrom(localAddress: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      url,
      { method: "POST", localAddress, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(data), ...headers } },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

describe(`accounts and limits (${engine})`, () => {
  let cp: ControlPlane;
  const env: Record<string, string> = {};
  const login = (from: string, name: string, password: string) => postFrom(from, `${cp.url}/api/auth/login`, { name, password });
  /** A tRPC call with a session cookie, as the dashboard makes it. */
  const withCookie = async (cookie: string, proc: string, input?: unknown) => {
    const res =
      input === undefined
        ? await fetch(`${cp.url}/api/trpc/${proc}`, { headers: { cookie } })
        : await fetch(`${cp.url}/api/trpc/${proc}`, {
            method: "POST",
            headers: { cookie, origin: cp.url, "content-type": "application/json" },
            body: JSON.stringify(input),
          });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine, env });
  });
  afterAll(() => cp?.dispose());

  it("lets the admin log in from one address while an attacker fails from another, counts no successes, and backs off the attacker", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await login(ATTACKER, "admin", `guess-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
    const locked = await login(ATTACKER, "admin", ADMIN_PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body.message).toMatch(/too many failed logins; try again in 1 s/);
    // The admin, from another address, is not locked out; and successes never count.
    for (let i = 0; i < 12; i++) expect((await login("127.0.0.1", "admin", ADMIN_PASSWORD)).status).toBe(200);
    // The attacker's next failure, once the lock is over, doubles it.
    await sleep(1100);
    expect((await login(ATTACKER, "admin", "guess-again")).status).toBe(401);
    expect((await login(ATTACKER, "admin", "guess-more")).body.message).toMatch(/try again in 2 s/);
  });

  it("cannot block a token whose id is known from another address", async () => {
    const { token } = await api(cp.url).mutate("token.create", {});
    const id = token.split(".")[0];
    const attempt = () =>
      postFrom(ATTACKER, `${cp.url}/api/enrol`, {
        token: `${id}.${"x".repeat(24)}`,
        publicKey: keyPair().publicKey,
        profile: profile("a".repeat(32)),
        inventory,
      });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await attempt()).status);
    expect(statuses.slice(0, 11)).toEqual(Array(11).fill(401));
    expect(statuses[11]).toBe(429);
    // The real host, elsewhere, enrols with the real token.
    const real = await enrolRaw(cp.url, { token, publicKey: keyPair().publicKey, profile: profile("b".repeat(32)), inventory });
    expect(real.status).toBe(201);
  });

  it("ends a user's other sessions when the password changes, and refuses a rotated key's old secret", async () => {
    const admin = api(cp.url);
    const { id } = await admin.mutate("user.create", { name: "rita", role: "viewer", password: "rita-password-1" });
    const here = await sessionCookieFor(cp.url, "rita", "rita-password-1");
    const there = await sessionCookieFor(cp.url, "rita", "rita-password-1");
    const changed = await withCookie(here, "user.changePassword", { currentPassword: "rita-password-1", newPassword: "rita-password-2" });
    expect(changed.status).toBe(200);
    expect((await withCookie(there, "user.me")).status).toBe(401);
    expect((await withCookie(here, "user.me")).body.result.data.name).toBe("rita");
    // An admin setting the password ends the rest.
    await admin.mutate("user.setPassword", { id, password: "rita-password-3" });
    expect((await withCookie(here, "user.me")).status).toBe(401);
    expect((await login("127.0.0.1", "rita", "rita-password-3")).status).toBe(200);

    const created = await admin.mutate("apiKey.create", { name: "ci", role: "viewer" });
    const rotated = await admin.mutate("apiKey.rotate", { id: created.id });
    await expect(api(cp.url, created.key).query("user.me")).rejects.toMatchObject({ status: 401 });
    expect((await api(cp.url, rotated.key).query("user.me")).actor).toBe("key:ci");
  });

  it("changes a password with the form on the Account page", async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchBrowser();
      await api(cp.url).mutate("user.create", { name: "bea", role: "viewer", password: "bea-password-1" });
      const elsewhere = await sessionCookieFor(cp.url, "bea", "bea-password-1");
      const page = await browser.newPage();
      await page.goto(`${cp.url}/login`);
      await page.getByLabel("User name").fill("bea");
      await page.getByLabel("Password").fill("bea-password-1");
      await page.getByRole("button", { name: "Log in" }).click();
      await page.waitForURL((u) => !u.pathname.startsWith("/login"));
      await page.getByRole("link", { name: /Your account/ }).click();
      await page.waitForURL(/\/account$/);
      await hydrated(page);
      await page.getByLabel("Current password").fill("bea-password-1");
      await page.getByLabel("New password (10+ characters)").fill("bea-password-2");
      await page.getByLabel("New password again").fill("bea-password-2");
      await page.getByRole("button", { name: "Change password" }).click();
      await page.getByRole("status").filter({ hasText: "Password changed. Your other session has ended." }).waitFor();
      expect((await withCookie(elsewhere, "user.me")).status).toBe(401);
      // The browser's own session goes on.
      await page.reload();
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Your account");
      expect((await login("127.0.0.1", "bea", "bea-password-2")).status).toBe(200);
    } finally {
      await browser?.close();
    }
  });

  it("ends admin's sessions at a restart with a new MESH_ADMIN_PASSWORD, and refuses the old key after a new MESH_ADMIN_API_KEY", async () => {
    const cookie = await sessionCookieFor(cp.url, "admin", ADMIN_PASSWORD);
    // A new key, the same password: the old key is refused, the session goes on.
    env.MESH_ADMIN_API_KEY = "e2e-rotated-admin-api-key-0123";
    await cp.stop();
    await cp.boot();
    await expect(api(cp.url, ADMIN_API_KEY).query("user.me")).rejects.toMatchObject({ status: 401 });
    expect((await api(cp.url, env.MESH_ADMIN_API_KEY).query("user.me")).role).toBe("admin");
    expect((await withCookie(cookie, "user.me")).status).toBe(200);
    // A new password: every session of admin ends.
    env.MESH_ADMIN_PASSWORD = "e2e-new-admin-password";
    await cp.stop();
    await cp.boot();
    expect((await withCookie(cookie, "user.me")).status).toBe(401);
    expect((await login("127.0.0.1", "admin", ADMIN_PASSWORD)).status).toBe(401);
    expect((await login("127.0.0.1", "admin", "e2e-new-admin-password")).status).toBe(200);
    const events = await api(cp.url, env.MESH_ADMIN_API_KEY).query("event.list", { actor: "system" });
    expect(events.items.map((e: { action: string }) => e.action)).toEqual(["user.set-password", "api-key.rotate"]);
  });
});
