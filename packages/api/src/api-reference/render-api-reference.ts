// Renders docs/api.md from the app router: every procedure with its kind, who may call it, and its
// input and output as JSON Schema. The reference is generated (npm run docs:api -w @mesh/api) and a
// test regenerates it in memory, so it cannot drift from the code.
import type { z } from "zod";
import { appRouter } from "../root";
import type { ProcedureMeta } from "../trpc";
import { procedureAccess, type ProcedureAccess } from "./procedure-access";
import { toJsonSchema, type JsonSchema } from "./json-schema";
import { compactJson } from "./compact-json";

interface ProcedureDef {
  type: "query" | "mutation" | "subscription";
  inputs: z.ZodType[];
  output?: z.ZodType;
  meta?: ProcedureMeta;
}

export interface ProcedureEntry {
  path: string;
  kind: ProcedureDef["type"];
  access: ProcedureAccess;
  description: string | null;
  input: z.ZodType | null;
  output: z.ZodType | null;
}

/** Every procedure of the app router, in the order root.ts composes them. */
export function listProcedures(): ProcedureEntry[] {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, { _def: ProcedureDef }> } })._def.procedures;
  return Object.entries(procedures).map(([path, procedure]) => ({
    path,
    kind: procedure._def.type,
    access: procedureAccess(procedure),
    description: procedure._def.meta?.description ?? null,
    // tRPC merges several .input() calls; every procedure here has at most one.
    input: procedure._def.inputs[0] ?? null,
    output: procedure._def.output ?? null,
  }));
}

const ACCESS: Record<ProcedureAccess, string> = {
  admin: "admin (an admin's session or an admin API key)",
  viewer: "any caller (viewer or admin; session or API key)",
  public: "anyone",
};

const json = (value: unknown) => ["```json", compactJson(value), "```"].join("\n");
const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replace(/ /g, "-");

export function renderApiReference(): string {
  const procedures = listProcedures();
  const shared = new Map<string, JsonSchema>();
  const collect = (defs: Record<string, JsonSchema>) => {
    for (const [name, def] of Object.entries(defs)) {
      const seen = shared.get(name);
      if (seen && JSON.stringify(seen) !== JSON.stringify(def))
        throw new Error(`the shared type ${name} converts two ways; name only schemas that convert one way`);
      shared.set(name, def);
    }
  };
  const sections = new Map<string, string[]>();
  for (const p of procedures) {
    const router = p.path.split(".")[0]!;
    const out: string[] = [`### \`${p.path}\``, "", `${p.kind} · ${ACCESS[p.access]}`, "", ...(p.description ? [p.description, ""] : [])];
    if (p.input) {
      const input = toJsonSchema(p.input, "input");
      collect(input.defs);
      out.push("Input:", "", json(input.schema), "");
    } else out.push("Input: none.", "");
    if (p.output) {
      const output = toJsonSchema(p.output, "output");
      collect(output.defs);
      out.push("Output:", "", json(output.schema), "");
    } else out.push("Output: not declared.", "");
    sections.set(router, [...(sections.get(router) ?? []), out.join("\n")]);
  }
  const lines = [
    "# API reference",
    "",
    "<!-- Generated from packages/api/src/root.ts by `npm run docs:api -w @mesh/api`; do not edit by hand. -->",
    "",
    "Every dashboard action is a tRPC procedure, callable over HTTP at `/api/trpc/<procedure>` with",
    "`Authorization: Bearer <API key>` (or a dashboard session). A query is a `GET` with its input as",
    "JSON in the `input` query parameter; a mutation is a `POST` with its input as the JSON body",
    '(`Content-Type: application/json`). The answer is `{ "result": { "data": <output> } }`; an error is',
    '`{ "error": { "message", "data": { "code", "httpStatus", "zodIssues" } } }`.',
    "",
    "The API sends plain JSON: times (`format: date-time`) are ISO 8601 strings. Inputs are checked",
    "against the schemas below (an unknown key is refused where the schema says",
    "`additionalProperties: false`); outputs are checked against theirs before they are sent.",
    "`#/$defs/<Name>` refers to the [types](#types) at the end, shared with the hosts' wire contract.",
    "",
    "| procedure | kind | who may call it |",
    "| --- | --- | --- |",
    ...procedures.map((p) => `| [\`${p.path}\`](#${anchor(p.path)}) | ${p.kind} | ${p.access} |`),
    "",
    ...[...sections].flatMap(([router, entries]) => [`## ${router}`, "", ...entries]),
    "## Types",
    "",
    ...[...shared.keys()].sort().flatMap((name) => [`### ${name}`, "", json(shared.get(name)), ""]),
  ];
  return lines.join("\n").replace(/\n+$/, "\n");
}
