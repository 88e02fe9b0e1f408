// alert.*: webhooks for alerts (admins). The secret is returned once, by create.
import { z } from "zod";
import { adminProcedure, router } from "../trpc";
import { ATTEMPTS_SHOWN, createWebhook, CreateWebhookInput, deleteWebhook, listAttempts, listWebhooks, setWebhookEnabled, testWebhook, WebhookId } from "../alerts/webhooks";

export const alertRouter = router({
  list: adminProcedure.query(({ ctx }) => listWebhooks(ctx)),
  create: adminProcedure.input(CreateWebhookInput).mutation(({ ctx, input }) => createWebhook(ctx, { actor: ctx.actor, input })),
  delete: adminProcedure.input(WebhookId).mutation(({ ctx, input }) => deleteWebhook(ctx, { actor: ctx.actor, id: input.id })),
  setEnabled: adminProcedure.input(z.strictObject({ id: z.string().uuid(), enabled: z.boolean() })).mutation(({ ctx, input }) => setWebhookEnabled(ctx, { actor: ctx.actor, ...input })),
  test: adminProcedure.input(WebhookId).mutation(({ ctx, input }) => testWebhook(ctx, { actor: ctx.actor, id: input.id })),
  attempts: adminProcedure.input(z.strictObject({ id: z.string().uuid(), limit: z.number().int().min(1).max(ATTEMPTS_SHOWN).optional() })).query(({ ctx, input }) => listAttempts(ctx, input)),
});
