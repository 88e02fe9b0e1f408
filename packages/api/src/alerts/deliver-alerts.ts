// Delivers what the outbox (alert_deliveries) owes. Any number of instances run this: a run claims due
// rows in one statement (FOR UPDATE SKIP LOCKED, and pushes their next attempt past the send timeout, so
// no other worker takes a row while it is being sent), posts each signed body, and records the outcome
// and one attempt row for the delivery log. A failure is retried with exponential backoff, up to MAX_ATTEMPTS.
import { eq, inArray, sql } from "drizzle-orm";
import { alertAttempts, alertDeliveries, webhooks, rowsOf } from "@mesh/db";
import type { Deps } from "../deps";
import { metrics } from "../metrics/metrics";
import { openSecret } from "./webhooks";
import { SIGNATURE_HEADER, signBody } from "./sign";

export const MAX_ATTEMPTS = 8;
export const DELIVERIES_PER_RUN = 20;
export const SEND_TIMEOUT_MS = 10_000;
/** Attempts kept per webhook for its log. */
export const ATTEMPTS_KEPT = 100;
/** Days a delivered or failed delivery (and its attempts) is kept. */
export const DELIVERIES_KEPT_DAYS = 7;
/** Old deliveries deleted per run at most (the rest go in the next runs). */
export const DELIVERIES_DELETED_PER_RUN = 1_000;
const MAX_DELAY_MS = 60 * 60_000;

export interface DeliverOptions {
  /** First retry's delay; each next one doubles (capped at an hour). */
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

export function retryDelay(attempts: number, baseMs: number): number {
  return Math.min(baseMs * 2 ** (attempts - 1), MAX_DELAY_MS);
}

export async function deliverAlerts(deps: Pick<Deps, "db" | "log" | "grants">, opts: DeliverOptions = {}): Promise<{ delivered: number; failed: number }> {
  const retryBaseMs = opts.retryBaseMs ?? 10_000;
  const send = opts.fetch ?? fetch;
  const claimed = rowsOf<{ id: string | number; webhook_id: string; event: string; body: string; attempts: number }>(
    await deps.db.execute(sql`
      update alert_deliveries d set attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ${(SEND_TIMEOUT_MS * 3) / 1000})
      where d.id in (
        select id from alert_deliveries where status = 'pending' and next_attempt_at <= now()
        order by next_attempt_at limit ${DELIVERIES_PER_RUN} for update skip locked)
      returning d.id, d.webhook_id, d.event, d.body, d.attempts`),
  );
  if (claimed.length === 0) return { delivered: 0, failed: 0 };
  const hooks = new Map(
    (
      await deps.db
        .select({ id: webhooks.id, url: webhooks.url, secret: webhooks.secret, enabled: webhooks.enabled })
        .from(webhooks)
        .where(inArray(webhooks.id, [...new Set(claimed.map((c) => c.webhook_id))]))
    ).map((h) => [h.id, h]),
  );
  // A delivery to a disabled webhook is not sent, and not kept for later either: it is marked failed
  // with an attempt saying why (one statement each, whatever their number). Turning a webhook back on
  // must not replay what it missed while off (offline alerts days old), and a failed row leaves with
  // the old deliveries below instead of waiting pending for ever.
  const disabled = claimed.filter((d) => hooks.get(d.webhook_id)?.enabled === false).map((d) => Number(d.id));
  if (disabled.length > 0) {
    await deps.db.transaction(async (tx) => {
      await tx.update(alertDeliveries).set({ status: "failed" }).where(inArray(alertDeliveries.id, disabled));
      await tx.execute(sql`
        insert into alert_attempts (delivery_id, webhook_id, event, ok, error)
        select id, webhook_id, event, false, 'webhook disabled: not sent' from alert_deliveries
        where id in (${sql.join(
          disabled.map((id) => sql`${id}`),
          sql`, `,
        )})`);
    });
  }
  let delivered = 0;
  let failed = 0;
  await Promise.all(
    claimed.map(async (d) => {
      const id = Number(d.id);
      const hook = hooks.get(d.webhook_id);
      if (!hook) return; // deleted meanwhile: its deliveries went with it (cascade)
      if (!hook.enabled) return; // marked failed above
      let httpStatus: number | null = null;
      let error: string | null = null;
      try {
        const res = await send(hook.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": "mesh-alerts/1",
            [SIGNATURE_HEADER]: signBody(openSecret(deps, hook.id, hook.secret), d.body),
            "x-mesh-event": d.event,
            "x-mesh-delivery": String(id),
          },
          body: d.body,
          redirect: "manual",
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
        httpStatus = res.status;
        await res.body?.cancel().catch(() => {});
        if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } };
        error = (e.name === "TimeoutError" ? `no answer in ${SEND_TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.cause?.message ?? e.message)).slice(0, 300);
      }
      const ok = error === null;
      const giveUp = !ok && d.attempts >= MAX_ATTEMPTS;
      await deps.db.transaction(async (tx) => {
        await tx
          .update(alertDeliveries)
          .set(
            ok
              ? { status: "delivered" }
              : giveUp
                ? { status: "failed" }
                : { nextAttemptAt: sql`now() + make_interval(secs => ${retryDelay(d.attempts, retryBaseMs) / 1000})` },
          )
          .where(eq(alertDeliveries.id, id));
        await tx.insert(alertAttempts).values({ deliveryId: id, webhookId: hook.id, event: d.event, httpStatus, ok, error: error ?? (ok ? null : "failed") });
      });
      metrics.alertDeliveries.inc({ outcome: ok ? "delivered" : giveUp ? "failed" : "retry" });
      if (ok) delivered++;
      else {
        failed++;
        deps.log.warn({ webhookId: hook.id, delivery: id, attempts: d.attempts, error, giveUp }, "alert delivery failed");
      }
    }),
  );
  // The log keeps the newest attempts of each webhook touched (one statement; none when every webhook
  // claimed for was deleted meanwhile: no `in ()`).
  if (hooks.size > 0) {
    await deps.db.execute(sql`
      delete from alert_attempts a using (
        select id from (select id, row_number() over (partition by webhook_id order by id desc) as k from alert_attempts
                        where webhook_id in (${sql.join(
                          [...hooks.keys()].map((h) => sql`${h}::uuid`),
                          sql`, `,
                        )})) t where k > ${ATTEMPTS_KEPT}) old
      where a.id = old.id`);
  }
  // Deliveries done with (delivered or failed) leave after DELIVERIES_KEPT_DAYS, their attempts with
  // them (cascade): one statement, at most DELIVERIES_DELETED_PER_RUN rows, so the outbox stays bounded.
  await deps.db.execute(sql`
    delete from alert_deliveries where id in (
      select id from alert_deliveries
      where status <> 'pending' and created_at < now() - make_interval(days => ${DELIVERIES_KEPT_DAYS})
      limit ${DELIVERIES_DELETED_PER_RUN})`);
  return { delivered, failed };
}
