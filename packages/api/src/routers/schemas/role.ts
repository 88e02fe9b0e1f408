// role.list, role.plan, role.upsert, role.delete and role.reconcile as the API returns them.
// A role's own fields are the wire contract's (@mesh/protocol), as role.upsert takes them.
import { z } from "zod";
import { GrantDeclaration, Resource, RolloutPolicy, Selector } from "@mesh/protocol";
import { ContentDiff, Conflict, FleetCompileSummary, MachineChange, PlanGroup } from "./plan";

export const RoleSource = z
  .strictObject({ selector: z.unknown(), resources: z.unknown() })
  .meta({ description: "The role's selector and resources as its author sent them (their key order, no defaults added), for the editor." });

export const RoleListItem = z.strictObject({
  name: z.string(),
  selector: Selector,
  resources: z.array(Resource).meta({ description: "Inline content is `mesh-redacted:sha256:<hex>:<bytes>` unless the caller is an admin." }),
  grants: z.array(GrantDeclaration),
  version: z.number().int(),
  revokeOfflineAfter: z.number().int().nullable().optional().meta({ description: "Minutes offline after which a node of this role is revoked (null: never)." }),
  rolloutPolicy: RolloutPolicy.nullable().meta({ description: "The role's default rollout policy (null: a save without one goes all at once)." }),
  source: RoleSource.nullable().optional().meta({ description: "Admins only: the role as its author wrote it (null when not kept)." }),
});

export const RoleList = z.array(RoleListItem);

export const RolePlan = z.strictObject({
  role: z.string(),
  exists: z.boolean(),
  matchedCount: z.number().int(),
  matched: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  changedCount: z.number().int().meta({ description: "Nodes on which saving does something (or would, but for a conflict)." }),
  declarationChanges: z.number().int().meta({ description: "Nodes whose declaration changes (some only in what the host already has: adopt)." }),
  nodes: z
    .array(z.strictObject({ nodeId: z.string(), name: z.string(), changes: z.array(MachineChange), conflicts: z.array(Conflict) }))
    .meta({ description: "The first changed nodes, each with its changes." }),
  groups: z.array(PlanGroup),
  summary: z.string(),
  allAtOnceWarning: z.string().nullable(),
  diffs: z.record(z.string(), ContentDiff),
});

export const StartedRollout = z.strictObject({
  id: z.string(),
  plan: z.strictObject({
    nodes: z.number().int().meta({ description: "Nodes the change reaches (pinned, then released wave by wave)." }),
    unchanged: z.number().int(),
    waves: z.array(z.number().int()),
    fromVersion: z.number().int(),
    toVersion: z.number().int(),
  }),
});

export const RoleSaved = FleetCompileSummary.extend({
  role: z.strictObject({
    name: z.string(),
    selector: Selector,
    resources: z.array(Resource),
    grants: z.array(GrantDeclaration),
    revokeOfflineAfter: z.number().int().nullable().optional(),
  }),
  version: z.number().int(),
  rollout: StartedRollout.nullable().meta({ description: "The staged rollout the save started (null: it went to every node at once)." }),
});

export const RoleDeleted = FleetCompileSummary;
