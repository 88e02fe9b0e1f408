// What an act-now call answers (node.reconcile, node.correctDrift, node.acceptDrift, role.reconcile): decision 0033.
import { z } from "zod";

export const ReconcileAnswer = z.strictObject({
  eventId: z.number().int().nullable().meta({ description: "The audit event that carries the request." }),
  asked: z.number().int(),
  sent: z.number().int().meta({ description: "Sent a reconcile frame: linked now, with a host that reads it." }),
  offline: z.number().int().meta({ description: "Not linked now: they reconcile when they link again." }),
  tooOld: z.number().int().meta({ description: "Linked, but the host does not read reconcile-now: upgrade mesh-host." }),
});
