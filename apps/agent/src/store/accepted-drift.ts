// Drift an operator accepted, kept beside store.json in accepted.json rather than in it: the
// previous release parses store.json with strict schemas (top level and records), so a field
// added there makes a rolled-back host find its store unreadable, hence lost. It never reads
// accepted.json. An entry holds only for the record with the same subject and applied digest.
import { z } from "zod";
import { LIMITS, Sha256Hex } from "@mesh/protocol";
import { parseJson } from "./read-json";
import type { Store } from "./store";
import { KEYS } from "../state-dir/keys";

export const ACCEPTED_KEY = KEYS.accepted;

/** The observed digest accepted, projected on the declared state ("absent": nothing stands there). */
export const AcceptedDigest = z.union([Sha256Hex, z.literal("absent")]);

const Entry = z.strictObject({
  subject: z.string().max(LIMITS.path + 16),
  /** The record's `applied` when accepted: applied again since, the acceptance is gone. */
  applied: Sha256Hex,
  seen: AcceptedDigest,
});

export const AcceptedFile = z.strictObject({
  format: z.literal(1),
  accepted: z.array(Entry).max(LIMITS.resources * 2),
});
export type AcceptedFile = z.infer<typeof AcceptedFile>;

interface AcceptingRecord {
  subject: string;
  applied: string;
  accepted?: z.infer<typeof AcceptedDigest>;
}

/** Sets `accepted` on the records accepted.json names (same subject and applied digest); an unreadable file accepts nothing. */
export async function readAccepted(store: Store, records: AcceptingRecord[]): Promise<void> {
  const file = parseAccepted(await store.read(ACCEPTED_KEY));
  if (!file || file.accepted.length === 0) return;
  const bySubject = new Map(file.accepted.map((e) => [e.subject, e]));
  for (const record of records) {
    const entry = bySubject.get(record.subject);
    if (entry && entry.applied === record.applied && record.accepted === undefined) record.accepted = entry.seen;
  }
}

/**
 * Writes accepted.json as the records say, only when it differs from what stands (removed when
 * nothing is accepted). Called before store.json is written: a crash between the two leaves
 * either the acceptances just made (which the operator asked for) or ones whose applied digest
 * no longer matches (ignored).
 */
export async function writeAccepted(store: Store, records: readonly AcceptingRecord[]): Promise<void> {
  const entries = records.flatMap((r) => (r.accepted ? [{ subject: r.subject, applied: r.applied, seen: r.accepted }] : []));
  const text = entries.length === 0 ? null : `${JSON.stringify({ format: 1, accepted: entries } satisfies AcceptedFile)}\n`;
  const standing = (await store.read(ACCEPTED_KEY))?.toString("utf8") ?? null;
  if (text === standing) return;
  if (text === null) await store.remove(ACCEPTED_KEY);
  else await store.write(ACCEPTED_KEY, text);
}

export function parseAccepted(raw: Buffer | null): AcceptedFile | null {
  return parseJson(raw, AcceptedFile);
}
