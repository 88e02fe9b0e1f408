// The host's record of what it owns (store.json): one record per subject it
// created or adopted, each with the intent of the change in progress, if any.
import { z } from "zod";
import { AbsolutePath, LIMITS, RESOURCE_TYPES, ResourceId, Sha256Hex } from "@mesh/protocol";
import { AcceptedDigest, readAccepted, writeAccepted } from "./accepted-drift";
import { Original } from "./original";
import type { Store } from "./store";
import { KEYS } from "../state-dir/keys";

export const OWNERSHIP_KEY = KEYS.ownership;

/** What a record manages, as `resourceSubject` says it: `path:/x`, `package:curl`, `service:x.service`, `host:mesh-host`. */
export const Subject = z
  .string()
  .max(LIMITS.path + 16)
  .regex(/^(path|package|service|host):./);

/**
 * Written before the machine changes, cleared with the result. A host that dies
 * in between resolves it by observing (see reconcile/intents.ts).
 */
export const Intent = z.strictObject({
  op: z.enum(["create", "adopt", "update", "remove", "restore"]),
  /** The declared state the change aims at (create, adopt, update), to compare what is found after a crash. */
  want: z
    .record(z.string().max(64), z.union([z.string().max(LIMITS.path), z.number(), z.boolean(), z.null()]))
    .refine((s) => typeof s.type === "string", "a state has a type")
    .optional(),
});
export type Intent = z.infer<typeof Intent>;

export const OwnedRecord = z.strictObject({
  id: ResourceId,
  type: z.enum(RESOURCE_TYPES),
  subject: Subject,
  /** Digest of the declared state last applied: drift is the machine moving away from it. */
  applied: Sha256Hex,
  /** The resource's `after`, kept so that removal runs in reverse order once it left the declaration. */
  after: z.array(ResourceId).max(64).optional(),
  /** It stood there before the host took it over: leaving restores `original` (whose full digest is `digest`). */
  adopted: z.strictObject({ original: Original, digest: Sha256Hex }).optional(),
  intent: Intent.optional(),
  /**
   * Drift an operator accepted (a `reconcile` frame's `accept`): the observed digest, projected on the
   * declared state ("absent": nothing stands there). While the machine still shows exactly this, the
   * drift is not reported; it goes once the resource matches, is applied again, or moves elsewhere.
   * Kept in accepted.json, never written to store.json (the previous release reads store.json with
   * this schema minus this field, strictly: see accepted-drift.ts); read here only from a store.json
   * an unreleased build wrote with it.
   */
  accepted: AcceptedDigest.optional(),
});
export type OwnedRecord = z.infer<typeof OwnedRecord>;

export const Ownership = z.strictObject({
  format: z.literal(2),
  records: z.array(OwnedRecord).max(LIMITS.resources * 2),
  /** Set when the previous store was lost; cleared once a report saying so was acknowledged. */
  lostAt: z.iso.datetime().optional(),
  /**
   * Bumped on every write and reported: a store older than the generation the control plane
   * acknowledged (a restored backup, a snapshot) is a lost store, not the truth (decision 0027).
   */
  generation: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});
export type Ownership = z.infer<typeof Ownership>;

/** The first format (paths only, `pending` create intents), read once and written back as format 2. */
const OwnershipV1 = z.strictObject({
  format: z.literal(1),
  records: z
    .array(
      z.strictObject({
        id: ResourceId,
        type: z.enum(["file", "directory"]),
        path: AbsolutePath,
        applied: Sha256Hex,
        pending: z.boolean().optional(),
        existed: z.boolean().optional(),
      }),
    )
    .max(LIMITS.resources * 2),
  lostAt: z.iso.datetime().optional(),
});

export function emptyOwnership(): Ownership {
  return { format: 2, records: [] };
}

export interface LoadedOwnership {
  ownership: Ownership;
  /** True when this load found the store lost (missing while enrolled, empty, truncated or unreadable). */
  lostNow: boolean;
  /** Where the unreadable (or rolled back) store was kept, if there was one. */
  keptAs?: string;
  /** The store read was older than the generation known to be acknowledged: rolled back, so lost. */
  rolledBack?: { found: number; acknowledged: number };
}

/**
 * Read store.json. A missing file is a fresh host unless the host is enrolled
 * (enrolment writes an empty store, so then it was lost). An empty, truncated or
 * unparseable file is lost: kept aside, and an empty store with `lostAt` replaces it.
 * So is a valid store older than `acknowledged` (the newest generation this process
 * wrote or the control plane acknowledged), or one the control plane found older than
 * the one it stored (`rolledBack`): it no longer lists what was made since, and acting
 * on it would remove and restore from a past that is gone.
 */
export async function loadOwnership(
  store: Store,
  opts: { enrolled: boolean; now?: Date; acknowledged?: number; rolledBack?: boolean },
): Promise<LoadedOwnership> {
  const now = opts.now ?? new Date();
  const acknowledged = opts.acknowledged ?? 0;
  const stamp = now.toISOString().replace(/[-:.]/g, "");
  const raw = await store.read(OWNERSHIP_KEY);
  if (raw) {
    const parsed = parseOwnership(raw);
    const found = parsed?.generation ?? 0;
    if (parsed && !opts.rolledBack && (found >= acknowledged || parsed.lostAt)) {
      await readAccepted(store, parsed.records);
      return { ownership: parsed, lostNow: false };
    }
    const keptAs = `${OWNERSHIP_KEY}.${parsed ? "rolled-back" : "lost"}-${stamp}`;
    await store.setAside(OWNERSHIP_KEY, keptAs);
    const fresh = await saveLost(store, now, Math.max(acknowledged, found));
    return { ownership: fresh, lostNow: true, keptAs, ...(parsed ? { rolledBack: { found, acknowledged } } : {}) };
  }
  if (!opts.enrolled) return { ownership: emptyOwnership(), lostNow: false };
  return { ownership: await saveLost(store, now, acknowledged), lostNow: true };
}

/** An empty store that says it was lost, its generation past every one acknowledged before. */
async function saveLost(store: Store, now: Date, generation: number): Promise<Ownership> {
  const fresh: Ownership = { ...emptyOwnership(), lostAt: now.toISOString(), generation };
  await saveOwnership(store, fresh);
  return fresh;
}

export function parseOwnership(raw: Buffer): Ownership | null {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString("utf8"));
  } catch {
    return null;
  }
  const current = Ownership.safeParse(json);
  if (current.success) return current.data;
  const v1 = OwnershipV1.safeParse(json);
  if (!v1.success) return null;
  return {
    format: 2,
    // A v1 intent over something that already stood there cannot be restored: forget it.
    records: v1.data.records
      .filter((r) => !(r.pending && r.existed))
      .map((r) => ({
        id: r.id,
        type: r.type,
        subject: `path:${r.path}`,
        applied: r.applied,
        // A v1 intent carries no declared state: resolved as a create of unknown content.
        ...(r.pending ? { intent: { op: "create" as const } } : {}),
      })),
    ...(v1.data.lostAt ? { lostAt: v1.data.lostAt } : {}),
  };
}

/** Writes the store with its generation bumped (in `ownership` too, once the write is durable). */
export async function saveOwnership(store: Store, ownership: Ownership): Promise<void> {
  const generation = (ownership.generation ?? 0) + 1;
  await writeAccepted(store, ownership.records);
  // One record per line: readable by an operator, and far cheaper than indenting every field.
  // Without `accepted`: the previous release's strict schema would find the store unreadable.
  const lines = ownership.records.map(({ accepted: _accepted, ...r }) => JSON.stringify(r)).join(",\n ");
  const lost = ownership.lostAt ? `,"lostAt":${JSON.stringify(ownership.lostAt)}` : "";
  await store.write(OWNERSHIP_KEY, `{"format":2,"generation":${generation}${lost},"records":[\n ${lines}\n]}\n`);
  ownership.generation = generation;
}
