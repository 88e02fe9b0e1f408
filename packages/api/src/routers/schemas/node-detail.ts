// node.get as the API returns it: everything the node page shows. The host's own documents
// (profile, inventory, report, resources) are the wire contract's schemas from @mesh/protocol.
import { z } from "zod";
import { Drift, Inventory, OwnedResource, Profile, Report, Resource, ResourceError, ROLLOUT_STATES, SkippedResource } from "@mesh/protocol";
import { NodeHealth, NodeState } from "./node-list";
import { AuditEvent } from "./event";
import { Conflict } from "./plan";

const DeclarationEnd = z.enum(["remove", "forget"]).nullable().meta({ description: "A retiring node's final declaration: remove what it owns, or forget it." });

export const DeclarationVersion = z.strictObject({
  version: z.number().int(),
  hash: z.string(),
  roles: z.array(z.string()),
  final: DeclarationEnd,
  createdAt: z.date(),
});

export const ResourceState = z.strictObject({
  id: z.string(),
  status: z.enum(["applied", "drifted", "failed", "skipped", "pending"]),
  detail: z.string().optional().meta({ description: "The error, the skip reason or the drift description." }),
  digest: z.string().optional(),
});

export const NodeGrant = z.strictObject({
  grantId: z.string(),
  provider: z.string(),
  principal: z.string(),
  createdAt: z.date(),
  revokedAt: z.date().nullable(),
});

export const ReplacementClaim = z.strictObject({
  id: z.string(),
  address: z.string().nullable(),
  at: z.date(),
  hostname: z.string(),
});

export const RolloutPin = z.strictObject({
  role: z.string(),
  version: z.number().int().meta({ description: "The version the node keeps (0: not given the role yet)." }),
  rolloutId: z.string().nullable(),
  toVersion: z.number().int().nullable(),
  state: z.enum(ROLLOUT_STATES).nullable(),
});

export const NodeDetail = z.strictObject({
  id: z.string(),
  name: z.string().meta({ description: "The name shown: the admin's display name, else the hostname." }),
  hostname: z.string().meta({ description: "The hostname the machine enrolled with." }),
  displayName: z.string().nullable(),
  state: NodeState,
  health: NodeHealth,
  labels: z.record(z.string(), z.string()),
  machineId: z.string(),
  profile: Profile,
  inventory: Inventory,
  tokenId: z.string().nullable(),
  declaredVersion: z.number().int(),
  appliedVersion: z.number().int(),
  rejectedVersion: z.number().int().nullable(),
  ownedCount: z.number().int(),
  driftCount: z.number().int(),
  errorCount: z.number().int(),
  skippedCount: z.number().int(),
  storeLost: z.boolean(),
  storeGeneration: z.number().int(),
  conflicts: z.array(Conflict),
  retireMode: z.enum(["remove", "forget"]).nullable(),
  inventoryHash: z.string().nullable(),
  retiredAt: z.date().nullable(),
  revokedAt: z.date().nullable(),
  hostVersion: z.string().nullable(),
  gatewayId: z.string().nullable(),
  linkId: z.string().nullable(),
  replacesNodeId: z.string().nullable(),
  enrolledFrom: z.string().nullable(),
  lastSeenAt: z.date().nullable(),
  lastCheckedAt: z.date().nullable(),
  lastChangedAt: z.date().nullable(),
  hostFeatures: z.array(z.string()),
  forgottenAt: z.date().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
  declaration: DeclarationVersion.extend({
    resources: z.array(Resource).meta({ description: "Inline content is `mesh-redacted:sha256:<hex>:<bytes>` unless the caller is an admin." }),
  })
    .nullable()
    .meta({ description: "The current declaration (null before the first)." }),
  roles: z.array(z.string()).meta({ description: "The roles whose selectors match the node now." }),
  resourceRoles: z.record(z.string(), z.string()).meta({ description: "Resource id -> the matching role that declares it." }),
  report: Report.nullable().meta({ description: "The latest stored report." }),
  reportReceivedAt: z.date().nullable(),
  owned: z.array(OwnedResource),
  drift: z.array(Drift),
  errors: z.array(ResourceError),
  skipped: z.array(SkippedResource),
  resourceStates: z.array(ResourceState),
  events: z.array(AuditEvent.omit({ actorName: true, nodeName: true })).meta({ description: "The node's latest 50 audit events, newest first." }),
  declarations: z.array(DeclarationVersion).meta({ description: "The node's declaration versions, newest first." }),
  grants: z.array(NodeGrant),
  claims: z.array(ReplacementClaim).meta({ description: "Machines that enrolled claiming to be this node, awaiting an admin." }),
  rolloutPins: z.array(RolloutPin).meta({ description: "Roles this node keeps at an older version until a rollout reaches it." }),
});
