// alert.list / create / delete / setEnabled / test / attempts: webhooks an admin configures. The secret
// (the HMAC key of every delivery) is returned once, at creation; it is stored sealed with the
// control plane's secret key when one is open (decision 0011), the key the settler's grants use.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { desc, eq } from "drizzle-orm";
import { alertAttempts, alertDeliveries, webhooks, ALERT_EVENTS } from "@mesh/db";
import { MeshError } from "../errors";
import { nowOf, type Deps } from "../deps";
import { recordEvent } from "../services/record-event";
import { restartAlertWindow } from "./evaluate-alerts";

export const MAX_WEBHOOKS = 50;
export const ATTEMPTS_SHOWN = 20;

const WebhookUrl = z
  .string()
  .max(2048, "the URL is longer than 2048 characters")
  .url("not a URL")
  .refine((u) => !URL.canParse(u) || ["http:", "https:"].includes(new URL(u).protocol), "the URL must be http:// or https://")
  .refine((u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password), "put no credentials in the URL: deliveries are signed instead");

export const CreateWebhookInput = z
  .strictObject({
    name: z.string().trim().min(1, "name the webhook").max(64),
    url: WebhookUrl,
    events: z.array(z.enum(ALERT_EVENTS)).min(1, "choose at least one event").max(ALERT_EVENTS.length),
    /** For "offline": minutes a node must have been disconnected (1 minute to 30 days). */
    offlineMinutes: z.number().int().min(1).max(43_200).optional(),
  })
  .refine((w) => !w.events.includes("offline") || w.offlineMinutes !== undefined, {
    message: "say after how many minutes offline to alert",
    path: ["offlineMinutes"],
  });
export type CreateWebhookInput = z.input<typeof CreateWebhookInput>;

export const WebhookId = z.strictObject({ id: z.string().uuid() });

/** The context a webhook's sealed secret is bound to: it cannot be moved to another row. */
const secretContext = (id: string) => `webhook:${id}`;

export function sealSecret(deps: Pick<Deps, "grants">, id: string, secret: string): string {
  return deps.grants?.secrets ? deps.grants.secrets.seal(secret, secretContext(id)) : secret;
}

export function openSecret(deps: Pick<Deps, "grants">, id: string, stored: string): string {
  return deps.grants?.secrets && stored.startsWith("mesh-sealed-") ? deps.grants.secrets.open(stored, secretContext(id)) : stored;
}

export async function listWebhooks(deps: Pick<Deps, "db">) {
  const items = await deps.db
    .select({
      id: webhooks.id,
      name: webhooks.name,
      url: webhooks.url,
      events: webhooks.events,
      offlineMinutes: webhooks.offlineMinutes,
      enabled: webhooks.enabled,
      createdBy: webhooks.createdBy,
      createdAt: webhooks.createdAt,
    })
    .from(webhooks)
    .orderBy(webhooks.createdAt)
    .limit(MAX_WEBHOOKS);
  return { items };
}

export async function createWebhook(deps: Deps, opts: { actor: string; input: CreateWebhookInput }) {
  const input = CreateWebhookInput.parse(opts.input);
  const secret = `whsec_${randomBytes(24).toString("base64url")}`;
  const id = crypto.randomUUID();
  await deps.db.transaction(async (tx) => {
    const existing = await tx.select({ id: webhooks.id }).from(webhooks).limit(MAX_WEBHOOKS);
    if (existing.length >= MAX_WEBHOOKS) throw new MeshError("CONFLICT", `at most ${MAX_WEBHOOKS} webhooks; delete one first`);
    await tx.insert(webhooks).values({
      id,
      name: input.name,
      url: input.url,
      events: input.events,
      offlineMinutes: input.offlineMinutes ?? null,
      secret: sealSecret(deps, id, secret),
      createdBy: opts.actor,
    });
    // The first webhook watching offline or failing: its windows start now, not where an idle evaluator left them.
    await restartAlertWindow(tx, id);
    // The URL may carry a path token of the receiver's: only its origin goes in the audit trail.
    await recordEvent(tx, {
      actor: opts.actor,
      action: "alert.webhook-create",
      target: `webhook:${id}`,
      data: { name: input.name, origin: new URL(input.url).origin, events: input.events, offlineMinutes: input.offlineMinutes },
    });
  });
  return { id, name: input.name, secret };
}

export async function deleteWebhook(deps: Deps, opts: { actor: string; id: string }) {
  await deps.db.transaction(async (tx) => {
    const gone = await tx.delete(webhooks).where(eq(webhooks.id, opts.id)).returning({ name: webhooks.name });
    if (gone.length === 0) throw new MeshError("NOT_FOUND", "no such webhook");
    await tx.delete(alertAttempts).where(eq(alertAttempts.webhookId, opts.id));
    await recordEvent(tx, { actor: opts.actor, action: "alert.webhook-delete", target: `webhook:${opts.id}`, data: { name: gone[0]!.name } });
  });
  return { ok: true };
}

export async function setWebhookEnabled(deps: Deps, opts: { actor: string; id: string; enabled: boolean }) {
  await deps.db.transaction(async (tx) => {
    const [before] = await tx.select({ enabled: webhooks.enabled }).from(webhooks).where(eq(webhooks.id, opts.id)).for("update");
    if (!before) throw new MeshError("NOT_FOUND", "no such webhook");
    await tx.update(webhooks).set({ enabled: opts.enabled }).where(eq(webhooks.id, opts.id));
    // Enabled again: when it is the only one watching offline or failing, its windows start now.
    if (opts.enabled && !before.enabled) await restartAlertWindow(tx, opts.id);
    await recordEvent(tx, { actor: opts.actor, action: opts.enabled ? "alert.webhook-enable" : "alert.webhook-disable", target: `webhook:${opts.id}` });
  });
  return { ok: true };
}

/** Queues a "test" delivery to one webhook (the worker sends it, signed, as any other). */
export async function testWebhook(deps: Deps, opts: { actor: string; id: string }) {
  const [hook] = await deps.db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.id, opts.id));
  if (!hook) throw new MeshError("NOT_FOUND", "no such webhook");
  const body = JSON.stringify({ type: "mesh.alert", event: "test", at: nowOf(deps).toISOString(), count: 0, nodes: [] });
  await deps.db.insert(alertDeliveries).values({ webhookId: hook.id, event: "test", body });
  return { ok: true };
}

/** The delivery log: a webhook's last attempts, newest first. */
export async function listAttempts(deps: Pick<Deps, "db">, input: { id: string; limit?: number }) {
  const items = await deps.db
    .select({
      id: alertAttempts.id,
      deliveryId: alertAttempts.deliveryId,
      event: alertAttempts.event,
      at: alertAttempts.at,
      httpStatus: alertAttempts.httpStatus,
      ok: alertAttempts.ok,
      error: alertAttempts.error,
    })
    .from(alertAttempts)
    .where(eq(alertAttempts.webhookId, input.id))
    .orderBy(desc(alertAttempts.id))
    .limit(input.limit ?? ATTEMPTS_SHOWN);
  return { items };
}
