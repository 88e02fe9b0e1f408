// Access control against a real database: users, roles, sessions, named keys,
// and FORBIDDEN for a viewer inside every mutation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pino from "pino";
import { createTestDatabase, testEngines, type TestDatabase } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createCaller } from "../root";
import { createTrpcContext } from "../trpc";
import { ensureAdminCredentials } from "./credentials";
import { createLoginLimits, loginUser } from "./login-user";
import { SESSION_COOKIE } from "./sessions";
import { handleFileDownload, handleFileUpload } from "../http/files-handler";

describe.each(testEngines())("access on %s", (engine) => {
  let t: TestDatabase;
  let deps: Deps;
  beforeAll(async () => {
    t = await createTestDatabase(engine);
    deps = { db: t.database.db, log: pino({ level: "silent" }) };
    await ensureAdminCredentials(deps.db, { password: "admin-password-1", apiKey: "env-admin-api-key-0123" });
  });
  afterAll(() => t?.drop());

  const callerWith = async (headers: Record<string, string>) =>
    createCaller(await createTrpcContext({ deps, headers: new Headers(headers), publicUrl: "http://cp" }));
  const session = async (name: string, password: string) => {
    const { sessionId } = await loginUser(deps.db, createLoginLimits(), { name, password });
    return callerWith({ cookie: `${SESSION_COOKIE}=${sessionId}` });
  };

  it("makes MESH_ADMIN_PASSWORD the password of the admin user, and keeps the env API key an admin", async () => {
    const admin = await session("admin", "admin-password-1");
    expect(await admin.user.me()).toEqual({ name: "admin", role: "admin" });
    const key = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    expect((await key.user.me()).role).toBe("admin");
    await expect(session("admin", "wrong")).rejects.toThrow(/wrong user name or password/);
  });

  it("lets a viewer read and refuses every mutation with FORBIDDEN", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    await admin.user.create({ name: "vera", role: "viewer", password: "viewer-password" });
    const viewer = await session("vera", "viewer-password");
    expect((await viewer.node.list()).total).toBe(0);
    expect((await viewer.event.list()).items.length).toBeGreaterThan(0);
    const forbidden = { code: "FORBIDDEN" };
    await expect(viewer.token.create({})).rejects.toMatchObject(forbidden);
    await expect(viewer.role.upsert({ name: "x", selector: {}, resources: [] })).rejects.toMatchObject(forbidden);
    await expect(viewer.role.plan({ name: "x", selector: {}, resources: [] })).rejects.toMatchObject(forbidden);
    await expect(viewer.user.list()).rejects.toMatchObject(forbidden);
    await expect(viewer.apiKey.create({ name: "k", role: "admin" })).rejects.toMatchObject(forbidden);
    await expect(viewer.node.revoke({ id: crypto.randomUUID() })).rejects.toMatchObject(forbidden);
  });

  it("rotates the session at login and ends a revoked user's sessions", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const { id } = await admin.user.create({ name: "olga", role: "admin", password: "olga-password" });
    const limits = createLoginLimits();
    const first = await loginUser(deps.db, limits, { name: "olga", password: "olga-password" });
    const second = await loginUser(deps.db, limits, { name: "olga", password: "olga-password", previousSessionId: first.sessionId });
    expect(second.sessionId).not.toBe(first.sessionId);
    await expect((await callerWith({ cookie: `${SESSION_COOKIE}=${first.sessionId}` })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const olga = await callerWith({ cookie: `${SESSION_COOKIE}=${second.sessionId}` });
    expect((await olga.user.me()).name).toBe("olga");
    await admin.user.revoke({ id });
    // Every request authenticates anew: the next one with that cookie is nobody.
    await expect((await callerWith({ cookie: `${SESSION_COOKIE}=${second.sessionId}` })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("backs off failed logins per (account, address), never locking the account out elsewhere, and never counting successes", async () => {
    let now = 1_000_000;
    const limits = createLoginLimits({ perAccountAddress: 3, perAddress: 5, now: () => now });
    for (let i = 0; i < 4; i++) await expect(loginUser(deps.db, limits, { name: "admin", password: "nope", address: "attacker" })).rejects.toThrow(/wrong/);
    // The attacker's address is locked for that account...
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "attacker" })).rejects.toMatchObject({ code: "RATE_LIMITED" });
    // ...while the admin logs in from anywhere else.
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "office" })).resolves.toMatchObject({ role: "admin" });
    // Successes do not count: many logins in a row from one address all work.
    for (let i = 0; i < 8; i++) await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "office" })).resolves.toMatchObject({ role: "admin" });
    // Repeated failures back off: 1 s after the first lock, 2 s after the next failure.
    now += 1000;
    await expect(loginUser(deps.db, limits, { name: "admin", password: "nope", address: "attacker" })).rejects.toThrow(/wrong/);
    await expect(loginUser(deps.db, limits, { name: "admin", password: "nope", address: "attacker" })).rejects.toThrow(/try again in 2 s/);
    // One address spraying many accounts meets the coarse per-address cap (5 failures here).
    const sprayer = createLoginLimits({ perAccountAddress: 3, perAddress: 5, now: () => now });
    for (let i = 0; i < 6; i++) await expect(loginUser(deps.db, sprayer, { name: `x${i}`, password: "nope", address: "sprayer" })).rejects.toThrow(/wrong/);
    await expect(loginUser(deps.db, sprayer, { name: "x9", password: "nope", address: "sprayer" })).rejects.toMatchObject({ code: "RATE_LIMITED" });
    await expect(loginUser(deps.db, sprayer, { name: "admin", password: "admin-password-1", address: "office" })).resolves.toMatchObject({ role: "admin" });
  });

  it("issues a named key once, stores only its hash, and refuses it once revoked", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const created = await admin.apiKey.create({ name: "ci-reader", role: "viewer" });
    expect(created.key).toMatch(/^meshk_[a-z0-9]{8}\./);
    expect(JSON.stringify(await admin.apiKey.list())).not.toContain(created.key.split(".")[1]);
    const reader = await callerWith({ authorization: `Bearer ${created.key}` });
    expect(await reader.user.me()).toEqual({ name: "key:ci-reader", role: "viewer" });
    await expect(reader.token.create({})).rejects.toMatchObject({ code: "FORBIDDEN" });
    await admin.apiKey.revoke({ id: created.id });
    await expect((await callerWith({ authorization: `Bearer ${created.key}` })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("lets only an admin upload a file for sources; a viewer may read it", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const { key } = await admin.apiKey.create({ name: "file-reader", role: "viewer" });
    const upload = (authorization: string) =>
      handleFileUpload(deps, new Request("http://cp/api/files", { method: "POST", headers: { authorization, "content-type": "application/octet-stream" }, body: "hello" }));
    const refused = await upload(`Bearer ${key}`);
    expect(refused.status).toBe(403);
    const stored = await upload("Bearer env-admin-api-key-0123");
    expect(stored.status).toBe(201);
    const { sha256 } = (await stored.json()) as { sha256: string };
    const read = await handleFileDownload(deps, new Request(`http://cp/api/files/${sha256}`, { headers: { authorization: `Bearer ${key}` } }), sha256);
    expect(await read.text()).toBe("hello");
    const anonymous = await handleFileDownload(deps, new Request(`http://cp/api/files/${sha256}`), sha256);
    expect(anonymous.status).toBe(401);
  });
});
