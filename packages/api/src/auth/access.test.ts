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
import { ACTOR } from "./actor";
import { handleFileDownload, handleFileUpload } from "../http/files-handler";
import { createHash } from "node:crypto";
import { createToken } from "../services/tokens";
import { enrolNode } from "../services/enrol-node";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";

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
    expect(await admin.user.me()).toEqual({ name: "admin", actor: "user:admin", role: "admin", hasPassword: true });
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
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "attacker" })).rejects.toMatchObject({
      code: "RATE_LIMITED",
    });
    // ...while the admin logs in from anywhere else.
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "office" })).resolves.toMatchObject({ role: "admin" });
    // Successes do not count: many logins in a row from one address all work.
    for (let i = 0; i < 8; i++)
      await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "office" })).resolves.toMatchObject({ role: "admin" });
    // Repeated failures back off: 1 s after the first lock, 2 s after the next failure.
    now += 1000;
    await expect(loginUser(deps.db, limits, { name: "admin", password: "nope", address: "attacker" })).rejects.toThrow(/wrong/);
    await expect(loginUser(deps.db, limits, { name: "admin", password: "nope", address: "attacker" })).rejects.toThrow(/try again in 2 s/);
    // One address spraying many accounts gets one guess per account; a second round meets the
    // coarse per-address cap (5 failures here), and guessing ever more names the larger one (8 here).
    const sprayer = createLoginLimits({ perAccountAddress: 3, perAddress: 5, perAddressAny: 8, now: () => now });
    for (let i = 0; i < 6; i++) await expect(loginUser(deps.db, sprayer, { name: `x${i}`, password: "nope", address: "sprayer" })).rejects.toThrow(/wrong/);
    await expect(loginUser(deps.db, sprayer, { name: "x0", password: "nope2", address: "sprayer" })).rejects.toMatchObject({ code: "RATE_LIMITED" });
    for (let i = 6; i < 9; i++) await expect(loginUser(deps.db, sprayer, { name: `x${i}`, password: "nope", address: "sprayer" })).rejects.toThrow(/wrong/);
    await expect(loginUser(deps.db, sprayer, { name: "x9", password: "nope", address: "sprayer" })).rejects.toMatchObject({ code: "RATE_LIMITED" });
    await expect(loginUser(deps.db, sprayer, { name: "admin", password: "admin-password-1", address: "office" })).resolves.toMatchObject({ role: "admin" });
  });

  it("does not lock a user out for others' failures from the same address (a proxy everyone shares), and keys IPv6 by /64", async () => {
    const now = 1_000_000;
    const limits = createLoginLimits({ perAccountAddress: 3, perAddress: 5, now: () => now });
    // Someone behind the shared address fails on many accounts, well past the per-address cap.
    for (let i = 0; i < 12; i++)
      await expect(loginUser(deps.db, limits, { name: `guess${i}`, password: "nope", address: "10.0.0.1" })).rejects.toThrow(/wrong/);
    // The admin, who has not failed from there, still logs in from the same address.
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "10.0.0.1" })).resolves.toMatchObject({ role: "admin" });
    // A pair that has failed from there meets the per-address cap.
    await expect(loginUser(deps.db, limits, { name: "guess0", password: "nope", address: "10.0.0.1" })).rejects.toMatchObject({ code: "RATE_LIMITED" });
    // One IPv6 /64 is one address: a new address per guess does not reset the (account, address) count.
    for (let i = 0; i < 4; i++) await loginUser(deps.db, limits, { name: "admin", password: "nope", address: `2001:db8:5:6::${i + 1}` }).catch(() => {});
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "2001:db8:5:6::99" })).rejects.toMatchObject({
      code: "RATE_LIMITED",
    });
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-1", address: "2001:db8:5:7::1" })).resolves.toMatchObject({
      role: "admin",
    });
  });

  it("issues a named key once, stores only its hash, and refuses it once revoked", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const created = await admin.apiKey.create({ name: "ci-reader", role: "viewer" });
    expect(created.key).toMatch(/^meshk_[a-z0-9]{8}\./);
    expect(JSON.stringify(await admin.apiKey.list())).not.toContain(created.key.split(".")[1]);
    const reader = await callerWith({ authorization: `Bearer ${created.key}` });
    expect(await reader.user.me()).toEqual({ name: "key:ci-reader", actor: "key:ci-reader", role: "viewer", hasPassword: false });
    await expect(reader.token.create({})).rejects.toMatchObject({ code: "FORBIDDEN" });
    await admin.apiKey.revoke({ id: created.id });
    await expect((await callerWith({ authorization: `Bearer ${created.key}` })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("lets only an admin upload or read a file for sources; a viewer may not read it (a source may be a secret)", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const { key } = await admin.apiKey.create({ name: "file-reader", role: "viewer" });
    const upload = (authorization: string) =>
      handleFileUpload(
        deps,
        new Request("http://cp/api/files", { method: "POST", headers: { authorization, "content-type": "application/octet-stream" }, body: "hello" }),
      );
    const refused = await upload(`Bearer ${key}`);
    expect(refused.status).toBe(403);
    const stored = await upload("Bearer env-admin-api-key-0123");
    expect(stored.status).toBe(201);
    const { sha256 } = (await stored.json()) as { sha256: string };
    const byViewer = await handleFileDownload(deps, new Request(`http://cp/api/files/${sha256}`, { headers: { authorization: `Bearer ${key}` } }), sha256);
    expect(byViewer.status).toBe(403);
    expect(await byViewer.text()).not.toContain("hello");
    const read = await handleFileDownload(
      deps,
      new Request(`http://cp/api/files/${sha256}`, { headers: { authorization: "Bearer env-admin-api-key-0123" } }),
      sha256,
    );
    expect(await read.text()).toBe("hello");
    // A download a dropped connection cut is resumed from a byte on (one range); past the end is a 416.
    const ranged = (range: string) =>
      handleFileDownload(deps, new Request(`http://cp/api/files/${sha256}`, { headers: { authorization: "Bearer env-admin-api-key-0123", range } }), sha256);
    const rest = await ranged("bytes=2-");
    expect([rest.status, rest.headers.get("content-range"), await rest.text()]).toEqual([206, "bytes 2-4/5", "llo"]);
    expect((await ranged("bytes=9-")).status).toBe(416);
    expect(await (await ranged("bytes=0-1,3-4")).text()).toBe("hello");
    // The hash is checked before anything else: a NUL or any non-hash is a clear 400, not a 500.
    for (const bad of ["abc\u0000", "%00", "A".repeat(64), "../etc/passwd"]) {
      const res = await handleFileDownload(deps, new Request("http://cp/api/files/x", { headers: { authorization: "Bearer env-admin-api-key-0123" } }), bad);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/sha256/);
    }
    const anonymous = await handleFileDownload(deps, new Request(`http://cp/api/files/${sha256}`), sha256);
    expect(anonymous.status).toBe(401);
  });
  it("shows a viewer inline content only as its sha256 and size, in node.get and role.list; an admin sees it", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const { key } = await admin.apiKey.create({ name: "content-viewer", role: "viewer" });
    const viewer = await callerWith({ authorization: `Bearer ${key}` });
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: { app: "vault" } } });
    const { nodeId } = await enrolNode(deps, {
      token,
      publicKey: testKeyPair().publicKey,
      profile: testProfile(crypto.randomUUID()),
      inventory: emptyInventory(),
    });
    const secret = "API_TOKEN=hunter2-very-secret\n";
    const binary = Buffer.from("s3cr3t-bytes\u0000").toString("base64");
    await admin.role.upsert({
      name: "vault",
      selector: { labels: { app: "vault" } },
      resources: [
        { type: "file", id: "env", path: "/etc/vault.env", content: secret, mode: "0600" },
        { type: "file", id: "bin", path: "/etc/vault.key", content: binary, encoding: "base64" },
        { type: "service", id: "unit", unit: "vault.service", content: "[Service]\nEnvironment=TOKEN=hunter2-unit\nExecStart=/bin/true\n" },
      ],
    });
    const digest = (b: Buffer) => `mesh-redacted:sha256:${createHash("sha256").update(b).digest("hex")}:${b.length}`;
    const byId = (resources: unknown[]) => new Map((resources as Array<{ id: string; content?: string; encoding?: string }>).map((r) => [r.id, r]));

    const seen = await viewer.node.get({ id: nodeId });
    expect(JSON.stringify(seen)).not.toContain("hunter2");
    const declared = byId(seen.declaration!.resources as unknown[]);
    expect(declared.get("env")!.content).toBe(digest(Buffer.from(secret)));
    expect(declared.get("bin")).toMatchObject({ content: digest(Buffer.from(binary, "base64")), encoding: "utf8" });
    expect(declared.get("unit")!.content).toMatch(/^mesh-redacted:sha256:[0-9a-f]{64}:\d+$/);
    const roles = await viewer.role.list();
    expect(JSON.stringify(roles)).not.toContain("hunter2");
    expect(byId(roles.find((r) => r.name === "vault")!.resources).get("env")!.content).toBe(digest(Buffer.from(secret)));

    expect(byId((await admin.node.get({ id: nodeId })).declaration!.resources as unknown[]).get("env")!.content).toBe(secret);
    expect(byId((await admin.role.list()).find((r) => r.name === "vault")!.resources).get("env")!.content).toBe(secret);
    await admin.role.delete({ name: "vault" });
  });
  const lastEvent = async (action: string) => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    return (await admin.event.list({ action, limit: 1 })).items[0];
  };

  it("ends a user's other sessions when they change their own password, which needs the current one", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    await admin.user.create({ name: "pia", role: "viewer", password: "pia-password-1" });
    const limits = createLoginLimits();
    const here = await loginUser(deps.db, limits, { name: "pia", password: "pia-password-1" });
    const elsewhere = await loginUser(deps.db, limits, { name: "pia", password: "pia-password-1" });
    const pia = await callerWith({ cookie: `${SESSION_COOKIE}=${here.sessionId}` });
    await expect(pia.user.changePassword({ currentPassword: "not-it", newPassword: "pia-password-2" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: /current password is wrong/,
    });
    await expect(pia.user.changePassword({ currentPassword: "pia-password-1", newPassword: "short" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await pia.user.changePassword({ currentPassword: "pia-password-1", newPassword: "pia-password-2" })).toEqual({ changed: true, sessionsEnded: 1 });
    // The other session is refused; the one that made the change goes on.
    await expect((await callerWith({ cookie: `${SESSION_COOKIE}=${elsewhere.sessionId}` })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await (await callerWith({ cookie: `${SESSION_COOKIE}=${here.sessionId}` })).user.me()).name).toBe("pia");
    await expect(loginUser(deps.db, limits, { name: "pia", password: "pia-password-1" })).rejects.toThrow(/wrong/);
    await expect(loginUser(deps.db, limits, { name: "pia", password: "pia-password-2" })).resolves.toMatchObject({ role: "viewer" });
    expect(await lastEvent("user.change-password")).toMatchObject({ actor: "user:pia", target: "user:pia", data: { sessionsEnded: 1 } });
    // Someone holding a stolen session cannot guess the password behind it for long.
    for (let i = 0; i < 6; i++)
      await expect(pia.user.changePassword({ currentPassword: `guess-${i}`, newPassword: "pia-password-3" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(pia.user.changePassword({ currentPassword: "pia-password-2", newPassword: "pia-password-3" })).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
    });
    // ... and those guesses do not lock the owner, in their own session, out of changing it.
    const own = await loginUser(deps.db, limits, { name: "pia", password: "pia-password-2" });
    const owner = await callerWith({ cookie: `${SESSION_COOKIE}=${own.sessionId}` });
    expect(await owner.user.changePassword({ currentPassword: "pia-password-2", newPassword: "pia-password-3" })).toMatchObject({ changed: true });
    // An API key has no password to change.
    await expect(admin.user.changePassword({ currentPassword: "x", newPassword: "0123456789" })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("lets an admin set another user's password, ending all of that user's sessions", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const { id } = await admin.user.create({ name: "quinn", role: "viewer", password: "quinn-password-1" });
    const quinn = await loginUser(deps.db, createLoginLimits(), { name: "quinn", password: "quinn-password-1" });
    const viewer = await callerWith({ cookie: `${SESSION_COOKIE}=${quinn.sessionId}` });
    await expect(viewer.user.setPassword({ id, password: "quinn-password-9" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await admin.user.setPassword({ id, password: "quinn-password-2" })).toMatchObject({ changed: true, sessionsEnded: 1 });
    await expect((await callerWith({ cookie: `${SESSION_COOKIE}=${quinn.sessionId}` })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(loginUser(deps.db, createLoginLimits(), { name: "quinn", password: "quinn-password-2" })).resolves.toMatchObject({ role: "viewer" });
    expect(await lastEvent("user.set-password")).toMatchObject({ actor: ACTOR.adminKey, target: "user:quinn" });
  });

  it("rotates a named key: the new key is returned once, the old one is refused at once", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    const created = await admin.apiKey.create({ name: "deployer", role: "admin" });
    const rotated = await admin.apiKey.rotate({ id: created.id });
    expect(rotated).toMatchObject({ id: created.id, name: "deployer", role: "admin" });
    expect(rotated.key).toMatch(new RegExp(`^meshk_${created.id}\\.`));
    expect(rotated.key).not.toBe(created.key);
    await expect((await callerWith({ authorization: `Bearer ${created.key}` })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await (await callerWith({ authorization: `Bearer ${rotated.key}` })).user.me()).actor).toBe("key:deployer");
    expect(JSON.stringify(await admin.apiKey.list())).not.toContain(rotated.key.split(".")[1]);
    expect(await lastEvent("api-key.rotate")).toMatchObject({ actor: ACTOR.adminKey, target: `api-key:${created.id}` });
    await admin.apiKey.revoke({ id: created.id });
    await expect(admin.apiKey.rotate({ id: created.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("namespaces actors: a user or key named like a built-in actor cannot pass for it in event.list", async () => {
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-0123" });
    for (const name of ["api-key", "system", "bootstrap", "control-plane", "anonymous"]) {
      await admin.user.create({ name, role: "admin", password: "spoof-password" });
      const spoofer = await session(name, "spoof-password");
      expect((await spoofer.user.me()).actor).toBe(`user:${name}`);
      await spoofer.token.create({ labels: { by: name } });
      // Filtering on the built-in actor never finds what the user did...
      const builtIn = await admin.event.list({ actor: name, action: "token.create", limit: 200 });
      expect(builtIn.items.filter((e) => (e.data as { labels?: { by?: string } }).labels?.by === name)).toEqual([]);
      // ...which is listed under the user's own actor.
      const own = await admin.event.list({ actor: `user:${name}`, action: "token.create" });
      expect(own.items).toHaveLength(1);
    }
    // A key name is one key: a second key cannot share the first one's actor.
    await admin.apiKey.create({ name: "system", role: "viewer" });
    await expect(admin.apiKey.create({ name: "system", role: "admin" })).rejects.toMatchObject({ code: "CONFLICT" });
    // Nobody can choose a name that reads like a namespaced actor.
    await expect(admin.user.create({ name: "token:abc", role: "admin", password: "spoof-password" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(admin.apiKey.create({ name: "node:1", role: "admin" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("applies a changed MESH_ADMIN_PASSWORD or MESH_ADMIN_API_KEY at start, ending admin's sessions; an unchanged one changes nothing", async () => {
    const limits = createLoginLimits();
    const before = await loginUser(deps.db, limits, { name: "admin", password: "admin-password-1" });
    const stillThere = () => callerWith({ cookie: `${SESSION_COOKIE}=${before.sessionId}` }).then((c) => c.user.me());
    // A restart with the same settings: the session goes on.
    await ensureAdminCredentials(deps.db, { password: "admin-password-1", apiKey: "env-admin-api-key-0123" });
    await expect(stillThere()).resolves.toMatchObject({ name: "admin" });
    // Admin changes the password in the dashboard; a restart with the same setting keeps that change.
    await (await callerWith({ cookie: `${SESSION_COOKIE}=${before.sessionId}` })).user.changePassword({
      currentPassword: "admin-password-1",
      newPassword: "admin-password-2",
    });
    await ensureAdminCredentials(deps.db, { password: "admin-password-1", apiKey: "env-admin-api-key-0123" });
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-2" })).resolves.toMatchObject({ role: "admin" });
    // A new setting replaces the password and ends every session of admin.
    await ensureAdminCredentials(deps.db, { password: "admin-password-3", apiKey: "env-admin-api-key-4567" });
    await expect(stillThere()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-2" })).rejects.toThrow(/wrong/);
    await expect(loginUser(deps.db, limits, { name: "admin", password: "admin-password-3" })).resolves.toMatchObject({ role: "admin" });
    // The old admin key is refused, the new one works.
    await expect((await callerWith({ authorization: "Bearer env-admin-api-key-0123" })).user.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    const admin = await callerWith({ authorization: "Bearer env-admin-api-key-4567" });
    expect((await admin.event.list({ action: "user.set-password", limit: 1 })).items[0]).toMatchObject({
      actor: "system",
      target: "user:admin",
      data: { from: "MESH_ADMIN_PASSWORD" },
    });
    expect((await admin.event.list({ action: "api-key.rotate", limit: 1 })).items[0]).toMatchObject({
      actor: "system",
      target: "api-key",
      data: { from: "MESH_ADMIN_API_KEY" },
    });
  });
});
