// node.list and node.counts as the API returns them: one page of the fleet and its figures.
// Times are Date on the server and ISO 8601 strings on the wire (plain JSON, no transformer).
import { z } from "zod";
import { NodeState } from "@mesh/protocol";
import { NODE_HEALTHS } from "../../services/node-health";

export { NodeState };
export const NodeHealth = z
  .enum(NODE_HEALTHS)
  .nullable()
  .meta({ description: "null for a node whose state says what it is (pending claim, retiring, retired, revoked)." });

export const NodeListItem = z.strictObject({
  id: z.string(),
  name: z.string().meta({ description: "The name shown: the admin's display name, else the hostname." }),
  hostname: z.string(),
  displayName: z.string().nullable(),
  state: NodeState,
  health: NodeHealth,
  labels: z.record(z.string(), z.string()),
  declaredVersion: z.number().int(),
  appliedVersion: z.number().int(),
  rejectedVersion: z.number().int().nullable(),
  ownedCount: z.number().int(),
  driftCount: z.number().int(),
  errorCount: z.number().int(),
  skippedCount: z.number().int(),
  conflictCount: z.number().int(),
  storeLost: z.boolean(),
  replacesNodeId: z.string().nullable().meta({ description: "A pending node: the live node it claims to be (awaiting an admin)." }),
  hostVersion: z.string().nullable(),
  roles: z.array(z.string()).nullable().meta({ description: "The roles of its current declaration (null before the first)." }),
  lastSeenAt: z.date().nullable(),
  lastCheckedAt: z.date().nullable(),
  lastChangedAt: z.date().nullable(),
  createdAt: z.date(),
});

export const NodePage = z.strictObject({
  items: z.array(NodeListItem),
  total: z.number().int().meta({ description: "Nodes matching the filter, across every page." }),
});

export const NodeCounts = z.strictObject({
  byState: z.record(NodeState, z.number().int()),
  byHealth: z.record(z.enum(NODE_HEALTHS), z.number().int()),
  total: z.number().int(),
  drifting: z.number().int(),
});
