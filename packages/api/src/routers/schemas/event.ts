// event.list and event.export as the API returns them: the audit trail, a page or a CSV at a time.
import { z } from "zod";

export const AuditEvent = z.strictObject({
  id: z.number().int(),
  at: z.date(),
  actor: z.string().meta({ description: "`user:<name>`, `key:<name>`, `node:<id>`, `system:<part>`…" }),
  actorName: z.string().nullable(),
  action: z.string(),
  nodeId: z.string().nullable(),
  nodeName: z.string().nullable(),
  target: z.string().nullable(),
  result: z.string(),
  data: z.unknown().meta({ description: "The action's details (a role change's content diff for admins only)." }),
});

export const EventPage = z.strictObject({
  items: z.array(AuditEvent),
  nextBefore: z.number().int().nullable().meta({ description: "Pass as `before` for the next (older) page; null at the end." }),
});

export const EventExport = z.strictObject({
  csv: z.string(),
  rows: z.number().int(),
  truncated: z.boolean().meta({ description: "More events matched than the 10,000 exported." }),
});
