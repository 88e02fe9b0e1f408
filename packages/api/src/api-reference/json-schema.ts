// A procedure's input or output as JSON Schema (zod 4's toJSONSchema), as it travels over HTTP: the API
// sends plain JSON (no transformer), so a Date leaves the server as an ISO 8601 string. The schemas of
// the wire contract many procedures share (resources, selectors, host facts…) are named once and
// referenced as `#/$defs/<Name>` (they are listed in the reference's Types section).
import { z } from "zod";
import { GrantDeclaration, Inventory, Profile, Report, Resource, RolloutPolicy, Selector } from "@mesh/protocol";

/** The shared types, by the name the reference gives them. */
export const SHARED_TYPES: Record<string, z.ZodType> = { Resource, Selector, GrantDeclaration, RolloutPolicy, Profile, Inventory, Report };

export type JsonSchema = Record<string, unknown>;

/** Names the shared types in zod's registry (once per process; the reference's generator is its only user). */
function nameSharedTypes() {
  for (const [id, schema] of Object.entries(SHARED_TYPES)) {
    const meta = z.globalRegistry.get(schema);
    if (meta?.id !== id) z.globalRegistry.add(schema, { ...meta, id });
  }
}

/** The schema and the shared types it uses ($defs), apart. */
export function toJsonSchema(schema: z.ZodType, io: "input" | "output"): { schema: JsonSchema; defs: Record<string, JsonSchema> } {
  nameSharedTypes();
  const json = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === "date") Object.assign(ctx.jsonSchema, { type: "string", format: "date-time" });
      // z.number().int() says "a safe integer" as bounds on every integer: noise in a reference.
      if (ctx.jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete ctx.jsonSchema.minimum;
      if (ctx.jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete ctx.jsonSchema.maximum;
    },
  }) as JsonSchema;
  const { $schema: _, $defs = {}, ...rest } = json;
  if (io === "output") return { schema: rest, defs: $defs as Record<string, JsonSchema> };
  // A type's input differs from its output where it has defaults (optional in, always there out): `<Name>Input`.
  const names = Object.keys($defs as object);
  const renamed = names.reduce((text, name) => text.replaceAll(`"#/$defs/${name}"`, `"#/$defs/${name}Input"`), JSON.stringify({ rest, $defs }));
  const parsed = JSON.parse(renamed) as { rest: JsonSchema; $defs: Record<string, JsonSchema> };
  return { schema: parsed.rest, defs: Object.fromEntries(names.map((name) => [`${name}Input`, parsed.$defs[name]!])) };
}
