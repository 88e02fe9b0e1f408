// alert.*: webhooks for alerts (admins). The secret is returned once, by create.
import { z } from "zod";
import { adminProcedure, router } from "../trpc";
import { CreatedWebhook, WebhookAttempts, WebhookDone, WebhookList } from "./schemas/alert";
import {
  ATTEMPTS_SHOWN,
  createWebhook,
  CreateWebhookInput,
  deleteWebhook,
  listAttempts,
  listWebhooks,
  setWebhookEnabled,
  testWebhook,
  WebhookId,
} from "../alerts/webhooks";

export const alertRouter = router({
  list: adminProcedure
    .meta({ description: "The alert webhooks (never their secrets)." })
    .output(WebhookList)
    .query(({ ctx }) => listWebhooks(ctx)),
  create: adminProcedure
    .meta({ description: "Creates an alert webhook for the chosen events. The signing secret is shown only here." })
    .input(CreateWebhookInput)
    .output(CreatedWebhook)
    .mutation(({ ctx, input }) => createWebhook(ctx, { actor: ctx.actor, input })),
  delete: adminProcedure
    .meta({ description: "Deletes an alert webhook." })
    .input(WebhookId)
    .output(WebhookDone)
    .mutation(({ ctx, input }) => deleteWebhook(ctx, { actor: ctx.actor, id: input.id })),
  setEnabled: adminProcedure
    .meta({ description: "Turns an alert webhook on or off." })
    .input(z.strictObject({ id: z.string().uuid(), enabled: z.boolean() }))
    .output(WebhookDone)
    .mutation(({ ctx, input }) => setWebhookEnabled(ctx, { actor: ctx.actor, ...input })),
  test: adminProcedure
    .meta({ description: "Sends a test delivery to the webhook now." })
    .input(WebhookId)
    .output(WebhookDone)
    .mutation(({ ctx, input }) => testWebhook(ctx, { actor: ctx.actor, id: input.id })),
  attempts: adminProcedure
    .meta({ description: "The webhook's latest delivery attempts, newest first." })
    .input(z.strictObject({ id: z.string().uuid(), limit: z.number().int().min(1).max(ATTEMPTS_SHOWN).optional() }))
    .output(WebhookAttempts)
    .query(({ ctx, input }) => listAttempts(ctx, input)),
});
