// Alerts (issue 13): webhooks validated, events batched into one delivery per webhook and kind,
// evaluation once per control plane, deliveries signed, retried with backoff, and claimed once.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { alertAttempts, alertDeliveries, nodes, webhooks, rowsOf } from "@mesh/db";
import { testEngines } from "@mesh/db/testing";
import type { Report } from "@mesh/protocol";
import type { Deps } from "../deps";
import { createToken } from "../services/tokens";
import { enrolNode } from "../services/enrol-node";
import { emptyInventory, testKeyPair, testProfile, testReport } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";
import { createSecretBox } from "../secrets/secret-box";
import { createWebhook, CreateWebhookInput, listAttempts, listWebhooks, setWebhookEnabled, testWebhook } from "./webhooks";
import { bulkRetire, bulkRevoke, forgetNodes } from "../services/bulk-actions";
import { deleteRole, upsertRole } from "../services/roles";
import { recordReport } from "../services/record-report";
import { startAlertWorker } from "./alert-worker";
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

  const enrol = async (labels: Record<string, string> = {}) => {
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels } });
    return (await enrolNode(deps, { token, publicKey: testKeyPair().publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() }))
      .nodeId;
  };
  const deliveries = () => deps.db.select().from(alertDeliveries).orderBy(alertDeliveries.id);
  /** The one delivery queued for `hookId` since the last look, parsed. */
  const bodyFor = async (hookId: string) => {
    const mine = (await deliveries()).filter((d) => d.webhookId === hookId && d.status === "pending");
    expect(mine).toHaveLength(1);
    return JSON.parse(mine[0]!.body) as { event: string; count: number; nodes: Array<{ id: string; name: string; detail?: Record<string, unknown> }> };
  };
  const idsOf = (body: { nodes: Array<{ id: string }> }) => body.nodes.map((n) => n.id).sort();

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
    const callerWith = async (authorization: string) =>
      createCaller(await createTrpcContext({ deps, headers: new Headers({ authorization }), publicUrl: "http://cp" }));
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
    // Something to read, so this run evaluates and moves the cursor's time (an idle one writes nothing).
    await enrol();
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
    await deps.db
      .update(nodes)
      .set({ state: "disconnected", lastSeenAt: sql`now() - interval '5 minutes' + interval '1 second'` })
      .where(sql`${nodes.id} in (${a}, ${b})`);
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
    await deps.db
      .update(alertDeliveries)
      .set({ nextAttemptAt: new Date(Date.now() - 1000) })
      .where(eq(alertDeliveries.id, d!.id));
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

  it("schedules a retry on the database's clock, the one due deliveries are judged on", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "flaky-clock", url: failing.url, events: ["enrolled"] } });
    await testWebhook(deps, { actor: "admin", id: hook.id });
    expect(await deliverAlerts(deps, { retryBaseMs: 60_000 })).toEqual({ delivered: 0, failed: 1 });
    // The retry is stamped in the transaction that logs the attempt, on its now(): exactly the delay after
    // the attempt's own time (a time taken from this process would be off by the process's skew and the wait).
    const [row] = rowsOf<{ wait: string }>(
      await deps.db.execute(sql`
        select (extract(epoch from d.next_attempt_at - a.at) * 1000000)::bigint::text as wait
        from alert_deliveries d join alert_attempts a on a.delivery_id = d.id where d.webhook_id = ${hook.id}`),
    );
    expect(row?.wait).toBe(String(60_000_000));
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

  it("alerts revoked for a bulk revoke, naming every node by its shown name, in one delivery", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["revoked"] } });
    const [a, b] = [await enrol(), await enrol()];
    await deps.db.update(nodes).set({ displayName: "web-a" }).where(eq(nodes.id, a));
    await createAlertEvaluator(deps)();
    await bulkRevoke(deps, { actor: "admin", input: { ids: [a, b] } });
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 1 });
    const body = await bodyFor(hook.id);
    expect(body).toMatchObject({ event: "revoked", count: 2 });
    expect(idsOf(body)).toEqual([a, b].sort());
    expect(body.nodes.find((n) => n.id === a)!.name).toBe("web-a");
    await deliverAlerts(deps);
  });

  it("alerts revoked for the retiring nodes a forget revokes, and not for nodes already revoked", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["revoked"] } });
    const [retiring, gone] = [await enrol(), await enrol()];
    await bulkRetire(deps, { actor: "admin", input: { ids: [retiring] } });
    await bulkRevoke(deps, { actor: "admin", input: { ids: [gone] } });
    await createAlertEvaluator(deps)();
    await deliverAlerts(deps);
    // One node already revoked, forgotten alone: its event names it, but nothing is revoked now.
    await forgetNodes(deps, { actor: "admin", input: { ids: [gone] } });
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 0 });
    await forgetNodes(deps, { actor: "admin", input: { ids: [retiring, gone] } });
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 1 });
    expect(idsOf(await bodyFor(hook.id))).toEqual([retiring]);
    await deliverAlerts(deps);
  });

  it("alerts conflicted for every node a fleet-wide recompile put in conflict, with each node's own conflicts", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["conflicted"] } });
    const tag = crypto.randomUUID().slice(0, 8);
    const [a, b] = [await enrol({ clash: tag }), await enrol({ clash: tag })];
    const sel = { labels: { clash: tag } };
    await upsertRole(deps, { actor: "test", input: { name: `one-${tag}`, selector: sel, resources: [{ type: "file", id: "f", path: "/f", content: "1" }] } });
    await createAlertEvaluator(deps)();
    await upsertRole(deps, {
      actor: "test",
      confirmConflicts: true,
      input: { name: `two-${tag}`, selector: sel, resources: [{ type: "file", id: "f", path: "/f", content: "2" }] },
    });
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 1 });
    const body = await bodyFor(hook.id);
    expect(body).toMatchObject({ event: "conflicted", count: 2 });
    expect(idsOf(body)).toEqual([a, b].sort());
    expect(body.nodes[0]!.detail).toEqual({ conflicts: [{ key: "f", roles: [`one-${tag}`, `two-${tag}`] }] });
    await deleteRole(deps, { actor: "test", name: `two-${tag}` });
    await deleteRole(deps, { actor: "test", name: `one-${tag}` });
    await deliverAlerts(deps);
  });

  it("alerts failing as the node's health says: a node that refused its declaration", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["failing"] } });
    const id = await enrol();
    await deps.db
      .update(nodes)
      .set({ state: "enrolled", lastSeenAt: new Date(), lastCheckedAt: new Date(), declaredVersion: 1, appliedVersion: 0 })
      .where(eq(nodes.id, id));
    const report = (extra: Partial<Report> = {}) => testReport(1, extra);
    await recordReport(deps, id, report());
    await createAlertEvaluator(deps)();
    // The host refuses v2 whole: it reports v1 (held), no errors, and names v2.
    await deps.db.update(nodes).set({ declaredVersion: 2 }).where(eq(nodes.id, id));
    await recordReport(deps, id, report({ rejectedVersion: 2 }));
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 1 });
    const body = await bodyFor(hook.id);
    expect(body.nodes).toEqual([{ id, name: expect.any(String), detail: { errors: 0, skipped: 0, rejectedVersion: 2 } }]);
    // Still failing, nothing changed since: no second alert.
    expect(await createAlertEvaluator(deps)()).toEqual({ deliveries: 0 });
    await deliverAlerts(deps);
  });

  it("does not send to a disabled webhook: its deliveries are marked failed, with an attempt saying why", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "off", url: ok.url, events: ["enrolled"] } });
    await testWebhook(deps, { actor: "admin", id: hook.id });
    await setWebhookEnabled(deps, { actor: "admin", id: hook.id, enabled: false });
    const before = ok.got.length;
    expect(await deliverAlerts(deps)).toEqual({ delivered: 0, failed: 0 });
    expect(ok.got.length).toBe(before);
    expect((await deliveries()).filter((d) => d.webhookId === hook.id).map((d) => d.status)).toEqual(["failed"]);
    expect((await listAttempts(deps, { id: hook.id })).items.map((a) => [a.ok, a.error])).toEqual([[false, "webhook disabled: not sent"]]);
  });

  it("copes with a webhook deleted between claiming its deliveries and reading it", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "gone", url: ok.url, events: ["enrolled"] } });
    await testWebhook(deps, { actor: "admin", id: hook.id });
    // The webhook is deleted right after the worker claims its delivery (the first statement it runs).
    let claims = 0;
    const db = new Proxy(deps.db, {
      get(target, prop, recv) {
        if (prop !== "execute") return Reflect.get(target, prop, recv);
        return async (...args: Parameters<typeof target.execute>) => {
          const result = await target.execute(...args);
          if (claims++ === 0) await target.delete(webhooks).where(eq(webhooks.id, hook.id));
          return result;
        };
      },
    });
    expect(await deliverAlerts({ ...deps, db })).toEqual({ delivered: 0, failed: 0 });
  });

  it("deletes delivered and failed deliveries older than 7 days, with their attempts, and keeps the rest", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["enrolled"] } });
    await testWebhook(deps, { actor: "admin", id: hook.id });
    await testWebhook(deps, { actor: "admin", id: hook.id });
    await deliverAlerts(deps);
    const [old, recent] = (await deliveries()).filter((d) => d.webhookId === hook.id);
    await testWebhook(deps, { actor: "admin", id: hook.id });
    const pending = (await deliveries()).filter((d) => d.webhookId === hook.id).at(-1)!;
    await deps.db.update(alertDeliveries).set({ createdAt: sql`now() - interval '8 days'` }).where(sql`${alertDeliveries.id} in (${old!.id}, ${pending.id})`);
    await deps.db.update(alertDeliveries).set({ nextAttemptAt: sql`now() + interval '1 hour'` }).where(eq(alertDeliveries.id, pending.id));
    await testWebhook(deps, { actor: "admin", id: hook.id });
    expect(await deliverAlerts(deps)).toEqual({ delivered: 1, failed: 0 });
    const left = (await deliveries()).filter((d) => d.webhookId === hook.id);
    expect(left.map((d) => d.id)).not.toContain(old!.id);
    expect(left.map((d) => d.id)).toEqual(expect.arrayContaining([recent!.id, pending.id]));
    expect(await deps.db.select().from(alertAttempts).where(eq(alertAttempts.deliveryId, old!.id))).toEqual([]);
  });

  it("keeps delivering while the evaluator fails", async () => {
    const hook = await createWebhook(deps, { actor: "admin", input: { name: "ops", url: ok.url, events: ["enrolled"] } });
    await testWebhook(deps, { actor: "admin", id: hook.id });
    // A webhook row the evaluator cannot read (events not a list): every evaluation throws.
    await deps.db.execute(
      sql`insert into webhooks (name, url, events, secret, created_by) values ('broken', ${ok.url}, '{"not": "a list"}'::jsonb, 'x', 'test')`,
    );
    const before = ok.got.length;
    const stop = startAlertWorker(deps, { intervalMs: 50 });
    for (let i = 0; i < 100 && ok.got.length === before; i++) await new Promise((r) => setTimeout(r, 50));
    await stop();
    expect(ok.got.length - before).toBe(1);
  });
});
