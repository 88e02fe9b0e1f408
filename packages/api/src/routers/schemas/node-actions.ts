// What node.* changes answer (labels, rename, retire, revoke, replacement claims, act now, bulk acts).
import { z } from "zod";
import { Conflict, ContentDiff, FleetCompileSummary, MachineChange } from "./plan";

export const LabelsPlan = z.strictObject({
  nodeId: z.string(),
  compilable: z.boolean().meta({ description: "false: the node's state takes no new declaration (nothing else is planned)." }),
  reported: z.boolean().meta({ description: "Whether the host has reported: without a report the verbs come from the declarations only." }),
  rolesGained: z.array(z.string()),
  rolesLost: z.array(z.string()),
  changes: z.array(MachineChange),
  diffs: z.record(z.string(), ContentDiff),
  conflicts: z.array(Conflict),
  newConflicts: z.array(Conflict),
});

export const LabelsSet = z.strictObject({
  id: z.string(),
  labels: z.record(z.string(), z.string()),
  declaredVersion: z.number().int(),
  conflicts: z.array(Conflict),
});

export const NodeRenamed = z.strictObject({ id: z.string(), name: z.string(), displayName: z.string().nullable(), hostname: z.string() });

export const NodeRetiring = z.strictObject({
  id: z.string(),
  state: z.literal("retiring"),
  version: z.number().int().meta({ description: "The final declaration's version." }),
});

export const NodeRevoked = z.strictObject({ id: z.string(), state: z.literal("revoked"), grantsRevoked: z.number().int() });

export const ReplacementApproved = z.strictObject({ id: z.string(), replacedBy: z.string() });

export const ReplacementRejected = z.strictObject({ id: z.string(), state: z.literal("revoked") });

export const NodesForgotten = z.strictObject({ nodes: z.number().int(), revoked: z.number().int(), grantsRevoked: z.number().int() });

export const BulkLabelsSet = FleetCompileSummary.extend({ nodes: z.number().int() });

export const BulkRetiring = z.strictObject({ nodes: z.number().int(), state: z.literal("retiring") });

export const BulkRevoked = z.strictObject({ nodes: z.number().int(), state: z.literal("revoked"), grantsRevoked: z.number().int() });
