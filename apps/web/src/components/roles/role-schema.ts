// The role's JSON schema, made from the protocol's zod schemas (z.toJSONSchema), read for the
// editor's field help: resource types and their fields, onDrift, selector operators. One
// source: a field described in packages/protocol is explained here.
import { z } from "zod";
import { Role } from "@mesh/protocol";

interface JsonSchema {
  description?: string;
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  additionalProperties?: JsonSchema;
}

export interface FieldHelp {
  name: string;
  description: string;
  required: boolean;
  values?: string;
}
export interface ResourceHelp {
  type: string;
  description: string;
  fields: FieldHelp[];
}
export interface RoleHelp {
  resources: ResourceHelp[];
  onDrift: { description: string; values: string };
  operators: string[];
}

let cached: RoleHelp | null = null;

export function roleHelp(): RoleHelp {
  if (cached) return cached;
  const schema = z.toJSONSchema(Role, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const variants = schema.properties?.resources?.items?.oneOf ?? schema.properties?.resources?.items?.anyOf ?? [];
  const resources = variants.map((v) => ({
    type: String(v.properties?.type?.const ?? "?"),
    description: (v.description ?? "").replace(/^[a-z]+: /, ""),
    fields: Object.entries(v.properties ?? {})
      .filter(([name]) => name !== "type" && name !== "onDrift")
      .map(([name, f]) => ({
        name,
        description: f.description ?? "",
        required: (v.required ?? []).includes(name),
        values: f.enum ? f.enum.join(" | ") + (f.default !== undefined ? ` (default ${String(f.default)})` : "") : undefined,
      })),
  }));
  const onDrift = variants[0]?.properties?.onDrift ?? {};
  const operators = (schema.properties?.selector?.properties?.labels?.additionalProperties?.anyOf ?? []).map((m) => m.description ?? "");
  cached = { resources, onDrift: { description: onDrift.description ?? "", values: (onDrift.enum ?? []).join(" | ") }, operators };
  return cached;
}
