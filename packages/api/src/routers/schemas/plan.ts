// What a plan says a change does on the machines (role.plan, node.planLabels) and the conflicts a
// save meets (role.upsert, role.delete, node.setLabels): decision 0039.
import { z } from "zod";

export const Conflict = z.strictObject({
  key: z.string().meta({ description: "The resource id or subject (path, package, unit) two roles declare differently." }),
  roles: z.tuple([z.string(), z.string()]),
});

export const NodeConflicts = z.strictObject({ nodeId: z.string(), conflicts: z.array(Conflict) });

/** What a save recompiled: how many nodes got a new declaration, and every node in conflict. */
export const FleetCompileSummary = z.strictObject({ changed: z.number().int(), conflicts: z.array(NodeConflicts) });

const DeclaredValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const MachineChange = z.strictObject({
  id: z.string(),
  type: z.string(),
  subject: z.string(),
  action: z.enum(["create", "update", "remove", "adopt", "unchanged"]),
  diff: z.string().optional().meta({ description: "Key into the plan's `diffs`." }),
  fields: z.array(z.strictObject({ key: z.string(), before: DeclaredValue, after: DeclaredValue })).optional(),
  observed: z.string().optional(),
  fails: z.string().optional().meta({ description: "It will certainly fail, and why." }),
  failedLastTime: z.string().optional(),
  restores: z.boolean().optional(),
});

export const ContentDiff = z.strictObject({
  lines: z.array(z.string()).meta({ description: "Unified-diff lines: `@@` hunk heads, then lines starting with ' ', '-' or '+'." }),
  omitted: z.number().int(),
});

export const PlanGroup = z.strictObject({
  label: z.string(),
  count: z.number().int(),
  examples: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  changes: z.array(MachineChange),
  conflicts: z.array(Conflict),
  reported: z.boolean(),
  fails: z.array(z.string()),
});
