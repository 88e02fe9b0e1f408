// Roles as operators write them: a selector over labels and profile facts, and
// the resources every matching node gets. An empty selector matches every node.
import { z } from "zod";
import { LIMITS } from "./limits";
import { Resource, refineResources } from "./resources";
import { GrantDeclaration } from "./grant";

export const RoleName = z
  .string()
  .min(1)
  .max(LIMITS.name)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, "lower-case letters, digits and '-'");

const Scalar = z.union([z.string().max(256), z.number(), z.boolean()]);

/**
 * One condition on a label or profile fact: a bare value means equals; otherwise
 * { in: [...] }, { notIn: [...] }, { exists: bool }, { ne: v } or numeric { gt, gte, lt, lte }.
 */
export const Match = z
  .union([
    Scalar.meta({ description: 'A bare value: equals, e.g. "web" or 4 (a label "4" equals 4).' }),
    z.strictObject({ in: z.array(Scalar).min(1).max(256) }).meta({ description: '{ "in": [a, b] }: equals one of the values.' }),
    z.strictObject({ notIn: z.array(Scalar).min(1).max(256) }).meta({ description: '{ "notIn": [a, b] }: set and equals none of the values.' }),
    z.strictObject({ exists: z.boolean() }).meta({ description: '{ "exists": true }: the label or fact is set (false: it is not).' }),
    z.strictObject({ ne: Scalar }).meta({ description: '{ "ne": v }: set and not equal to v.' }),
    z
      .strictObject({ gt: z.number().optional(), gte: z.number().optional(), lt: z.number().optional(), lte: z.number().optional() })
      .meta({ description: '{ "gte": 4, "lt": 16 }: a number (labels compared as numbers) within the bounds.' })
      .refine((m) => Object.keys(m).length > 0, "give at least one of gt, gte, lt, lte"),
  ])
  .meta({ description: "One condition on a label or profile fact." });
export type Match = z.infer<typeof Match>;

const Conditions = z.record(z.string().min(1).max(64), Match).refine((c) => Object.keys(c).length <= 64, "at most 64 conditions");

export const Selector = z.strictObject({
  /** Conditions on node labels, e.g. { "tier": "web", "zone": { "in": ["a", "b"] } }. */
  labels: Conditions.optional().meta({ description: 'Conditions on node labels, e.g. { "tier": "web", "zone": { "in": ["a", "b"] } }.' }),
  /** Conditions on profile facts, e.g. { "arch": "x86_64", "cpus": { "gte": 4 } }. */
  profile: Conditions.optional().meta({ description: 'Conditions on profile facts, e.g. { "arch": "x86_64", "cpus": { "gte": 4 } }.' }),
});
export type Selector = z.infer<typeof Selector>;

export const RoleResources = z.array(Resource).max(LIMITS.resourcesPerRole).superRefine(refineResources);

/** The offline limit a role's revoke policy takes: 5 minutes at least, a year at most. */
export const REVOKE_OFFLINE_MINUTES = { min: 5, max: 365 * 24 * 60 } as const;
const UNIT_MINUTES: Record<string, number> = { m: 1, h: 60, d: 24 * 60 };

/**
 * How long a node of the role may stay disconnected before the control plane revokes it: minutes,
 * or a duration ("90m", "12h", "30d"); null or absent: never (the default). Parsed to minutes.
 */
export const RevokeOfflineAfter = z
  .union(
    [
      z.number().int(),
      z
        .string()
        .trim()
        .regex(/^\d+\s*[mhd]$/)
        .transform((s) => Number(s.slice(0, -1).trim()) * UNIT_MINUTES[s.slice(-1)]!),
    ],
    { error: 'minutes, or a duration such as "90m", "12h" or "30d"' },
  )
  .pipe(z.number().min(REVOKE_OFFLINE_MINUTES.min, "at least 5 minutes").max(REVOKE_OFFLINE_MINUTES.max, "at most 365 days"))
  .nullable()
  .meta({
    description:
      'Revoke a node of this role once it has been disconnected this long: minutes, or "90m", "12h", "30d" (5 minutes to 365 days; null: never). Nothing happens to the machine: the mesh refuses its key and revokes its grants.',
  });

const roleFields = {
  name: RoleName,
  selector: Selector.default({}),
  resources: RoleResources,
  /** Per-node credentials; each lands on the node as a file with the grant's id. */
  grants: z.array(GrantDeclaration).max(16).default([]),
  /** Revoke-when-offline policy, in minutes (absent or null: off). */
  revokeOfflineAfter: RevokeOfflineAfter.optional(),
};

export function refineRole(role: { resources: Resource[]; grants: GrantDeclaration[] }, ctx: z.RefinementCtx): void {
  const ids = new Set(role.resources.map((r) => r.id));
  const paths = new Set(role.resources.flatMap((r) => ("path" in r ? [r.path] : [])));
  role.grants.forEach((g, i) => {
    if (ids.has(g.id)) ctx.addIssue({ code: "custom", path: ["grants", i, "id"], message: `a resource already has id "${g.id}"` });
    if (paths.has(g.path)) ctx.addIssue({ code: "custom", path: ["grants", i, "path"], message: `a resource already manages ${g.path}` });
  });
}

export const Role = z.strictObject(roleFields).superRefine(refineRole);
export type Role = z.infer<typeof Role>;
export type RoleInput = z.input<typeof Role>;

/** The optional message a save keeps with the role version it makes (one line or a short paragraph). */
export const RoleVersionMessage = z.string().trim().max(500, "a version message is at most 500 characters");

/**
 * role.upsert's input: a role, and the admin's explicit yes to saving it although it puts
 * nodes into conflict (refused otherwise, naming the conflict).
 */
export const roleSaveFields = {
  ...roleFields,
  confirmConflicts: z.boolean().optional().meta({ description: "Save even though the change puts nodes into conflict." }),
  message: RoleVersionMessage.optional().meta({ description: "Why: kept with the new version (every save makes one)." }),
};
export const RoleSave = z.strictObject(roleSaveFields).superRefine(refineRole);
export type RoleSaveInput = z.input<typeof RoleSave>;
