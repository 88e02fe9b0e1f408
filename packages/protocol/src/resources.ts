// The resources a declaration may hold: a discriminated union on `type`.
// Later resource types (symlink, package, service, host) join the union here.
import { z } from "zod";
import { LIMITS } from "./limits";

export const ResourceId = z
  .string()
  .min(1)
  .max(LIMITS.id)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, "letters, digits, '_', '.', ':' or '-', starting with a letter or digit");

/** An absolute, normalised path: no '..' or '.' segments, no empty segments, no NUL. */
export const AbsolutePath = z
  .string()
  .min(2)
  .max(LIMITS.path)
  .refine((p) => p.startsWith("/"), "must be absolute")
  .refine((p) => !p.includes("\0"), "must not contain NUL")
  .refine((p) => !p.endsWith("/"), "must not end with '/'")
  .refine(
    (p) => p.slice(1).split("/").every((s) => s !== "" && s !== "." && s !== ".."),
    "must be normalised (no empty, '.' or '..' segments)",
  );

export const FileMode = z
  .string()
  .regex(/^0?[0-7]{3,4}$/, "an octal mode such as \"0644\"");

const common = {
  id: ResourceId,
  after: z.array(ResourceId).max(64).optional(),
};

export const FileResource = z.strictObject({
  type: z.literal("file"),
  ...common,
  path: AbsolutePath,
  content: z.string().max(LIMITS.fileContent),
  encoding: z.enum(["utf8", "base64"]).default("utf8"),
  mode: FileMode.default("0644"),
});
export type FileResource = z.infer<typeof FileResource>;

export const DirectoryResource = z.strictObject({
  type: z.literal("directory"),
  ...common,
  path: AbsolutePath,
  mode: FileMode.default("0755"),
});
export type DirectoryResource = z.infer<typeof DirectoryResource>;

export const Resource = z.discriminatedUnion("type", [FileResource, DirectoryResource]);
export type Resource = z.infer<typeof Resource>;
export type ResourceInput = z.input<typeof Resource>;
export type ResourceType = Resource["type"];

/** Adds an issue for every repeated id or path: a declaration names each once. */
export function refineUnique(list: Resource[], ctx: z.RefinementCtx): void {
  const ids = new Set<string>();
  const paths = new Set<string>();
  list.forEach((r, i) => {
    if (ids.has(r.id)) ctx.addIssue({ code: "custom", path: [i, "id"], message: `duplicate id "${r.id}"` });
    ids.add(r.id);
    if (paths.has(r.path)) ctx.addIssue({ code: "custom", path: [i, "path"], message: `duplicate path "${r.path}"` });
    paths.add(r.path);
  });
}

/** Resources with unique ids and unique paths. */
export const ResourceList = z.array(Resource).max(LIMITS.resources).superRefine(refineUnique);
