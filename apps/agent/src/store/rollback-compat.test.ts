import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LIMITS, RESOURCE_TYPES, ResourceId, Sha256Hex } from "@mesh/protocol";
import { ACCEPTED_KEY } from "./accepted-drift";
import { OWNERSHIP_KEY, loadOwnership, saveOwnership, type Ownership } from "./ownership";
import type { Store } from "./store";
import { tempDirs } from "../testing/temp-dirs";
import { storeKinds } from "../testing/store-kinds";

// ---- The previous release's store.json schema (fixture: do not update with ownership.ts) ----
const OldId = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32);
const OldMode = z.string().regex(/^[0-7]{4}$/);
const OldOriginal = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("file"), blob: Sha256Hex, mode: OldMode, uid: OldId, gid: OldId }),
  z.strictObject({ kind: z.literal("directory"), mode: OldMode, uid: OldId, gid: OldId }),
  z.strictObject({ kind: z.literal("symlink"), target: z.string().min(1).max(LIMITS.path) }),
  z.strictObject({ kind: z.literal("opaque"), data: z.json() }),
]);
const OldSubject = z
  .string()
  .max(LIMITS.path + 16)
  .regex(/^(path|package|service|host):./);
const OldIntent = z.strictObject({
  op: z.enum(["create", "adopt", "update", "remove", "restore"]),
  want: z
    .record(z.string().max(64), z.union([z.string().max(LIMITS.path), z.number(), z.boolean(), z.null()]))
    .refine((s) => typeof s.type === "string", "a state has a type")
    .optional(),
});
const OldOwnedRecord = z.strictObject({
  id: ResourceId,
  type: z.enum(RESOURCE_TYPES),
  subject: OldSubject,
  applied: Sha256Hex,
  after: z.array(ResourceId).max(64).optional(),
  adopted: z.strictObject({ original: OldOriginal, digest: Sha256Hex }).optional(),
  intent: OldIntent.optional(),
});
const OldOwnership = z.strictObject({
  format: z.literal(2),
  records: z.array(OldOwnedRecord).max(LIMITS.resources * 2),
  lostAt: z.iso.datetime().optional(),
  generation: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});
// ---- end of fixture ----

const freshDir = tempDirs("mesh-compat-");

const kinds = storeKinds(freshDir);

const applied = "a".repeat(64);
const withAccepted = (): Ownership => ({
  format: 2,
  records: [
    { id: "site", type: "directory", subject: "path:/srv/site", applied },
    { id: "index", type: "file", subject: "path:/srv/site/index.html", applied: "b".repeat(64), after: ["site"], accepted: "c".repeat(64) },
    { id: "gone", type: "file", subject: "path:/srv/site/gone", applied: "d".repeat(64), accepted: "absent" },
    {
      id: "motd",
      type: "file",
      subject: "path:/etc/motd",
      applied: "e".repeat(64),
      adopted: { original: { kind: "file", blob: "f".repeat(64), mode: "0644", uid: 0, gid: 0 }, digest: "0".repeat(64) },
      intent: { op: "update", want: { type: "file", path: "/etc/motd", mode: "0600" } },
    },
  ],
});

const oldParse = async (store: Store) => OldOwnership.safeParse(JSON.parse((await store.read(OWNERSHIP_KEY))!.toString("utf8")));

describe.each(kinds)("%s store, read by the previous release", (_kind, make) => {
  it("a store with accepted drift written by this release parses with the previous release's schema", async () => {
    const store = await make();
    await saveOwnership(store, withAccepted());
    const old = await oldParse(store);
    expect(old.error).toBeUndefined();
    expect(old.data!.records.map((r) => r.id)).toEqual(["site", "index", "gone", "motd"]);
    expect(old.data!.generation).toBe(1);
    // And this release still reads its acceptances back.
    const loaded = await loadOwnership(store, { enrolled: true });
    expect(loaded).toMatchObject({ lostNow: false, ownership: withAccepted() });
  });

  it("an acceptance holds only for the record as applied when accepted", async () => {
    const store = await make();
    await saveOwnership(store, withAccepted());
    // The previous release, rolled back to, rewrote store.json: index applied again, gone removed.
    const old = (await oldParse(store)).data!;
    old.records = old.records.filter((r) => r.id !== "gone").map((r) => (r.id === "index" ? { ...r, applied: "9".repeat(64) } : r));
    await store.write(OWNERSHIP_KEY, JSON.stringify(old));
    const loaded = await loadOwnership(store, { enrolled: true });
    expect(loaded.ownership.records.some((r) => r.accepted !== undefined)).toBe(false);
    // Written again, accepted.json goes: nothing is accepted.
    await saveOwnership(store, loaded.ownership);
    expect(await store.read(ACCEPTED_KEY)).toBeNull();
  });

  it("no accepted.json while nothing is accepted; it goes with the last acceptance and with a lost store", async () => {
    const store = await make();
    await saveOwnership(store, { format: 2, records: [{ id: "site", type: "directory", subject: "path:/srv/site", applied }] });
    expect(await store.read(ACCEPTED_KEY)).toBeNull();
    const ownership = withAccepted();
    await saveOwnership(store, ownership);
    expect(await store.read(ACCEPTED_KEY)).not.toBeNull();
    delete ownership.records[1]!.accepted;
    await saveOwnership(store, ownership);
    expect((await loadOwnership(store, { enrolled: true })).ownership.records.filter((r) => r.accepted).map((r) => r.id)).toEqual(["gone"]);
    // A lost store (unreadable) accepts nothing, and its acceptances are dropped with it.
    await store.write(OWNERSHIP_KEY, "{ truncated");
    const lost = await loadOwnership(store, { enrolled: true });
    expect(lost.lostNow).toBe(true);
    expect(await store.read(ACCEPTED_KEY)).toBeNull();
  });

  it("reads a store.json that still holds `accepted` in its records (written by an unreleased build) and moves it out", async () => {
    const store = await make();
    const ownership = withAccepted();
    await store.write(OWNERSHIP_KEY, JSON.stringify({ ...ownership, generation: 4 }));
    const loaded = await loadOwnership(store, { enrolled: true });
    expect(loaded).toMatchObject({ lostNow: false, ownership });
    await saveOwnership(store, loaded.ownership);
    expect((await oldParse(store)).success).toBe(true);
    expect((await loadOwnership(store, { enrolled: true })).ownership).toMatchObject(ownership);
  });

  it("an unreadable accepted.json accepts nothing and the store is not lost", async () => {
    const store = await make();
    await saveOwnership(store, withAccepted());
    await store.write(ACCEPTED_KEY, "garbage");
    const loaded = await loadOwnership(store, { enrolled: true });
    expect(loaded.lostNow).toBe(false);
    expect(loaded.ownership.records.some((r) => r.accepted !== undefined)).toBe(false);
  });
});
