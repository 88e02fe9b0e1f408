// What stood at a subject before the host adopted it: kept in store.json (file
// contents in originals/<sha256>), so that leaving the declaration restores it.
import { z } from "zod";
import { LIMITS, Sha256Hex } from "@mesh/protocol";

const Id = z
  .number()
  .int()
  .min(0)
  .max(2 ** 32);
const Mode = z.string().regex(/^[0-7]{4}$/);

export const Original = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("file"), blob: Sha256Hex, mode: Mode, uid: Id, gid: Id }),
  z.strictObject({ kind: z.literal("directory"), mode: Mode, uid: Id, gid: Id }),
  z.strictObject({ kind: z.literal("symlink"), target: z.string().min(1).max(LIMITS.path) }),
  /** A package's or a service's original state, in the shape its provider checks when restoring. */
  z.strictObject({ kind: z.literal("opaque"), data: z.json() }),
]);
export type Original = z.infer<typeof Original>;
