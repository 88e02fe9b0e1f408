// A grant as a role declares it: a per-node credential the control plane makes at
// a provider; the host receives it as a file resource (mode 0600 by default).
import { z } from "zod";
import { AbsolutePath, FileMode, ResourceId } from "./resources";

export const GrantDeclaration = z.strictObject({
  id: ResourceId,
  provider: z.literal("postgres"),
  /** read: SELECT; readwrite: SELECT, INSERT, UPDATE, DELETE — on every table of the schema. */
  access: z.enum(["read", "readwrite"]).default("read"),
  schema: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case schema name")
    .default("public"),
  /** Where the host writes the credential (a DATABASE_URL=... line). */
  path: AbsolutePath,
  mode: FileMode.default("0600"),
});
export type GrantDeclaration = z.infer<typeof GrantDeclaration>;
