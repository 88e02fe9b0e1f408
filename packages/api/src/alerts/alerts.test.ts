// Alerts (issue 13): webhooks validated, events batched into one delivery per webhook and kind,
// evaluation once per control plane, deliveries signed, retried with backoff, and claimed once.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { alertAttempts, alertDeliveries, nodes, webhooks } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "../services/create-token";
import { enrolNode } from "../services/enrol-node";
import { emptyInventory, testKeyPair, testProfile } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { createSecretBox } from "../secrets/secret-box";
import { createWebhook, CreateWebhookInput, listAttempts, listWebhooks, testWebhook } from "./webhooks";
import { createAlertEvaluator } from "./evaluate-alerts";
import { deliverAlerts, retryDelay } from "./deliver-alerts";
import { verifySignature } from "./sign";
import { createCaller } from "../root";
import { createTrpcContext } from "../trpc";
import { ensureAdminCredentials } from "../auth/credentials";

interface Received {
  body: string;
  signature: string | undefined;
  event: string | undefined;
}

/** A local receiver: answers `status()` and keeps what it got. */
async function receiver(status: () => number) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      got.push({ body: Buffer.concat(chunks).toString(), signature: req.headers["x-mesh-signature"] as string, event: req.headers["x-mesh-event"] as string });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe.each(testEngines())("alerts on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = { ...d, grants: { providers: {}, secrets: createSecretBox(randomBytes(32)) } }));
  let ok: Awaited<ReturnType<typeof receiver>>;
  let failing: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    ok = await receiver(() => 204);
    failing = await receiver(() => 500);
  });
  afterAll(async () => {
    await ok.close();
    await failing.close();
  });
  beforeEach(async () => {
    await deps.db.delete(webhooks);
    // Past everything done so far: each test sees only its own events.
    await createAlertEvaluator(deps)();
  });

  const enrol = async () => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: {} });
    return (await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() })).nodeId;
  };
  const deliveries = () => deps.db.select().from(alertDeliveries).orderBy(alertDeliveries.id);

  it("refuses bad webhooks, one error per class", () => {
    const good = { name: "ops", url: "https://hooks.example/x", events: ["enrolled"] };
    expect(CreateWebhookInput.safeParse(good).success).toBe(true);
    const bad: Array<[unknown, RegExp]> = [
      [{ ...good, url: "ftp://hooks.example/x" }, /http:\/\/ or https:\/\//],
      [{ ...good, url: "not a url" }, /not a URL/],
      [{ ...good, url: `https://h.example/${"a".repeat(2100)}` }, /2048/],
      [{ ...good, url: "https://user:pw@hooks.example/x" }, /no credentials/],
      [{ ...good, events: [] }, /at least one event/],
      [{ ...good, events: ["exploded"] }, /Invalid option|expected one of/i],
      [{ ...good, events: ["offline"] }, /how many minutes/],
      [{ ...good, events: ["offline"], offlineMinutes: 0 }, /too small|>=1/i],
      [{ ...good, name: "" }, /name the webhook/],
      [{ ...good, extra: 1 }, /unrecognized/i],
    ];
    for (const [input, message] of bad) {
      const r = CreateWebhookInput.safeParse(input);
      expect(r.success, JSON.stringify(input).slice(0, 80)).toBe(false);
      expect(r.error!.issues.map((i) => i.message).join("; ")).toMatch(message);
    }
  });

  it("lets only admins use alert.*, refuses bad input through the API, and audits changes", async () => {
    await ensureAdminCredentials(deps.db, { password: "admin-password-1", apiKey: "env-admin-api-key-0123" });
    const callerWith = async (authorization: string) => createCaller(await createTrpcContext({ deps, headers: new Headers({ authorization }), publicUrl: "http://cp" }));
    const admin = await callerWith("Bearer env-admin-api-key-0123");
    const { key } = await admin.apiKey.create({ name: `viewer-${randomBytes(3).toString("hex")}`, role: "viewer" });
    const viewer = await callerWith(`Bearer ${key}`);
    const forbidden = { code: "FORBIDDEN" };
    await expect(viewer.alert.list()).rejects.toMatchObject(forbidden);
    await expect(viewer.alert.create({ name: "x", url: ok.url, events: ["enrolled"] })).rejects.toMatchObject(forbidden);
    await expect(viewer.alert.attempts({ id: crypto.randomUUID() })).rejects.toMatchObject(forbidden);
    await expect(admin.alert.create({ name: "x", url: "file:///etc/passwd", events: ["enrolled"] })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(admin.alert.delete({ id: "not-a-uuid" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(admin.alert.attempts({ id: crypto.randomUUID(), limit: 1000 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(admin.alert.delete({ id: crypto.randomUUID() })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const created = await admin.alert.create({ name: "audited", url: `${ok.url}?token=receiver-secret`, events: ["enrolled"] });
    await admin.alert.setEnabled({ id: created.id, enabled: false });
    await admin.alert.delete({ id: created.id });
    const audit = (await admin.event.list({ limit: 10 })).items.filter((e) => e.action.startsWith("alert."));
    expect(audit.map((e) => e.action)).toEqual(["alert.webhook-delete", "alert.webhook-disable", "alert.webhook-create"]);
    // The receiver's URL may carry its own token: only the origin is audited.
    expect(JSON.stringify(audit)).not.toContain("receiver-secret");
  });

  it("returns the secret once and stores it sealed", async () => {
    const created = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["enrolled"] } });
    expect(created.secret).toMatch(/^whsec_/);
    const [row] = await deps.db.select().from(webhooks).where(eq(webhooks.id, created.id));
    expect(row!.secret).not.toContain(created.secret);
    expect(JSON.stringify(await listWebhooks(deps))).not.toContain(created.secret);
  });

  it("batches many enrolments into one delivery per webhook, signed over the raw body", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["enrolled", "revoked"] } });
    const ids = [await enrol(), await enrol(), await enrol()];
    const evaluate = createAlertEvaluator(deps);
    expect(await evaluate()).toEqual({ deliveries: 1 });
    expect(await evaluate()).toEqual({ deliveries: 0 });
    const before = ok.got.length;
    expect(await deliverAlerts(deps)).toEqual({ delivered: 1, failed: 0 });
    const got = ok.got.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.event).toBe("enrolled");
    expect(verifySignature(hook.secret, got[0]!.body, got[0]!.signature)).toBe(true);
    expect(verifySignature("whsec_other", got[0]!.body, got[0]!.signature)).toBe(false);
    const body = JSON.parse(got[0]!.body);
    expect(body).toMatchObject({ type: "mesh.alert", event: "enrolled", count: 3 });
    expect(body.nodes.map((n: { id: string }) => n.id).sort()).toEqual([...ids].sort());
    const log = await listAttempts(deps, { id: hook.id });
    expect(log.items[0]).toMatchObject({ ok: true, httpStatus: 204, error: null });
  });

  it("evaluates once when several instances run at the same time", async () => {
    await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["enrolled"] } });
    await enrol();
    const runs = await Promise.all([createAlertEvaluator(deps)(), createAlertEvaluator(deps)(), createAlertEvaluator(deps)()]);
    const queued = runs.reduce((n, r) => n + (r?.deliveries ?? 0), 0);
    expect(queued).toBe(1);
    expect((await deliveries()).filter((d) => d.status === "pending")).toHaveLength(1);
    await deliverAlerts(deps);
  });

  it.runIf(engine === "postgres")("skips a run while another instance's run holds the cursor, instead of waiting or repeating it", async () => {
    await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["enrolled"] } });
    await enrol();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    // Another instance's run, in progress: it holds the cursor row.
    const other = deps.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from alert_cursor where id = 1 for update`);
      locked();
      await held;
    });
    await lockTaken;
    expect(await createAlertEvaluator(deps)()).toBeNull();
    release();
    await other;
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 1 });
    await deliverAlerts(deps);
  });

  it("leaves the evaluation to the instance that ran less than an interval ago", async () => {
    await createAlertEvaluator(deps)();
    expect(await createAlertEvaluator(deps, { minIntervalMs: 60_000 })()).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    expect(await createAlertEvaluator(deps, { minIntervalMs: 200 })()).toEqual({ deliveries: 0 });
  });

  it("alerts once on nodes offline past N minutes, in one statement for all of them", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["offline"], offlineMinutes: 5 } });
    const [a, b, fresh] = [await enrol(), await enrol(), await enrol()];
    await createAlertEvaluator(deps)();
    // a and b crossed 5 minutes offline since the last run; fresh has been offline for 1 minute only.
    await deps.db.update(nodes).set({ state: "disconnected", lastSeenAt: sql`now() - interval '5 minutes' + interval '1 second'` }).where(sql`${nodes.id} in (${a}, ${b})`);
    await deps.db.update(nodes).set({ state: "disconnected", lastSeenAt: sql`now() - interval '1 minute'` }).where(eq(nodes.id, fresh));
    await new Promise((r) => setTimeout(r, 1100));
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 1 });
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 0 });
    const [d] = (await deliveries()).filter((x) => x.webhookId === hook.id);
    const body = JSON.parse(d!.body);
    expect(body.event).toBe("offline");
    expect(body.nodes.map((n: { id: string }) => n.id).sort()).toEqual([a, b].sort());
    await deliverAlerts(deps);
  });

  it("retries a failing receiver with backoff, logs each attempt, and delivers once it answers", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "flaky", url: failing.url, events: ["enrolled"] } });
    await testWebhook(deps, { actor: "admin", id: hook.id });
    expect(await deliverAlerts(deps, { retryBaseMs: 60_000 })).toEqual({ delivered: 0, failed: 1 });
    const [d] = (await deliveries()).filter((x) => x.webhookId === hook.id);
    expect(d).toMatchObject({ status: "pending", attempts: 1 });
    expect(d!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 50_000);
    // Not due yet: nothing is sent.
    expect(await deliverAlerts(deps)).toEqual({ delivered: 0, failed: 0 });
    // Due again, at a receiver that now answers.
    await deps.db.update(webhooks).set({ url: ok.url }).where(eq(webhooks.id, hook.id));
    await deps.db.update(alertDeliveries).set({ nextAttemptAt: new Date(Date.now() - 1000) }).where(eq(alertDeliveries.id, d!.id));
    expect(await deliverAlerts(deps)).toEqual({ delivered: 1, failed: 0 });
    const log = await listAttempts(deps, { id: hook.id });
    expect(log.items.map((a) => [a.ok, a.httpStatus, a.error])).toEqual([
      [true, 204, null],
      [false, 500, "HTTP 500"],
    ]);
    expect(retryDelay(1, 10_000)).toBe(10_000);
    expect(retryDelay(3, 10_000)).toBe(40_000);
    expect(retryDelay(30, 10_000)).toBe(3_600_000);
  });

  it("sends each delivery once when several workers run at the same time", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["enrolled"] } });
    for (let i = 0; i < 10; i++) await testWebhook(deps, { actor: "admin", id: hook.id });
    const before = ok.got.length;
    const runs = await Promise.all([deliverAlerts(deps), deliverAlerts(deps), deliverAlerts(deps)]);
    expect(runs.reduce((n, r) => n + r.delivered, 0)).toBe(10);
    expect(ok.got.length - before).toBe(10);
    const attempts = await deps.db.select().from(alertAttempts).where(eq(alertAttempts.webhookId, hook.id));
    expect(attempts).toHaveLength(10);
  });
});
