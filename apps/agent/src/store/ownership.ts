// The host's record of what it owns (store.json): one record per resource it
// created or took over, plus create intents written before the change is made.
import { z } from "zod";
import { AbsolutePath, LIMITS, Resource, ResourceId, Sha256Hex } from "@mesh/protocol";
import type { Store } from "./store";

export const OWNERSHIP_KEY = "store.json";

const ResourceTypeName = z.enum(Resource.options.map((o) => o.shape.type.value) as ["file", "directory"]);

export const OwnedRecord = z.strictObject({
  id: ResourceId,
  type: ResourceTypeName,
  path: AbsolutePath,
  /** Digest of the state last applied: drift is the machine moving away from it. */
  applied: Sha256Hex,
  /** An intent: written before a create, cleared once the create worked. */
  pending: z.boolean().optional(),
  /** For an intent: whether something already stood at the path before the create. */
  existed: z.boolean().optional(),
});
export type OwnedRecord = z.infer<typeof OwnedRecord>;

export const Ownership = z.strictObject({
  format: z.literal(1),
  records: z.array(OwnedRecord).max(LIMITS.resources * 2),
  /** Set when the previous store was lost; cleared once a report saying so was acknowledged. */
  lostAt: z.iso.datetime().optional(),
});
export type Ownership = z.infer<typeof Ownership>;

export function emptyOwnership(): Ownership {
  return { format: 1, records: [] };
}

export interface LoadedOwnership {
  ownership: Ownership;
  /** True when this load found the store lost (missing while enrolled, or unreadable). */
  lostNow: boolean;
  /** Where the unreadable store was kept, if there was one. */
  keptAs?: string;
}

/**
 * Read store.json. A missing file is a fresh host unless the host is enrolled
 * (enrolment writes an empty store, so then it was lost). An unparseable file
 * is lost: it is kept aside and an empty store with `lostAt` replaces it.
 */
export async function loadOwnership(
  store: Store,
  opts: { enrolled: boolean; now?: Date },
): Promise<LoadedOwnership> {
  const now = opts.now ?? new Date();
  const raw = await store.read(OWNERSHIP_KEY);
  if (raw) {
    const parsed = parseOwnership(raw);
    if (parsed) return { ownership: parsed, lostNow: false };
    const keptAs = `${OWNERSHIP_KEY}.lost-${now.toISOString().replace(/[-:.]/g, "")}`;
    await store.setAside(OWNERSHIP_KEY, keptAs);
    const fresh: Ownership = { ...emptyOwnership(), lostAt: now.toISOString() };
    await saveOwnership(store, fresh);
    return { ownership: fresh, lostNow: true, keptAs };
  }
  if (!opts.enrolled) return { ownership: emptyOwnership(), lostNow: false };
  const fresh: Ownership = { ...emptyOwnership(), lostAt: now.toISOString() };
  await saveOwnership(store, fresh);
  return { ownership: fresh, lostNow: true };
}

function parseOwnership(raw: Buffer): Ownership | null {
  try {
    const result = Ownership.safeParse(JSON.parse(raw.toString("utf8")));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

export async function saveOwnership(store: Store, ownership: Ownership): Promise<void> {
  await store.write(OWNERSHIP_KEY, JSON.stringify(ownership, null, 1) + "\n");
}
