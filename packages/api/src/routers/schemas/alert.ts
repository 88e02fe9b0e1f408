// alert.* as the API returns them: alert webhooks and their delivery attempts. The secret is returned once.
import { z } from "zod";
import { ALERT_EVENTS } from "@mesh/db";

export const WebhookList = z.strictObject({
  items: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      url: z.string(),
      events: z.array(z.enum(ALERT_EVENTS)),
      offlineMinutes: z.number().int().nullable(),
      enabled: z.boolean(),
      createdBy: z.string(),
      createdAt: z.date(),
    }),
  ),
});

export const CreatedWebhook = z.strictObject({
  id: z.string(),
  name: z.string(),
  secret: z.string().meta({ description: "Signs every delivery (shown once)." }),
});

export const WebhookDone = z.strictObject({ ok: z.boolean() });

export const WebhookAttempts = z.strictObject({
  items: z.array(
    z.strictObject({
      id: z.number().int(),
      deliveryId: z.number().int(),
      event: z.string(),
      at: z.date(),
      httpStatus: z.number().int().nullable(),
      ok: z.boolean(),
      error: z.string().nullable(),
    }),
  ),
});
