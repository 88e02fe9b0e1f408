// The editor's text fields checked against the protocol's Role schema; each
// issue is attached to the field it belongs to (name, selector or resources).
import { Role } from "@mesh/protocol";

export type Field = "name" | "selector" | "resources";
export type DraftResult = { role: Role; errors: null } | { role: null; errors: Partial<Record<Field, string[]>> };

/** `grants` are not edited here; they are carried over so saving keeps them. */
export function checkDraft(name: string, selectorText: string, resourcesText: string, grants: unknown = []): DraftResult {
  const errors: Partial<Record<Field, string[]>> = {};
  const parse = (field: Field, text: string) => {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      errors[field] = [`not valid JSON: ${(err as Error).message}`];
      return undefined;
    }
  };
  const selector = parse("selector", selectorText);
  const resources = parse("resources", resourcesText);
  if (Object.keys(errors).length) return { role: null, errors };
  const parsed = Role.safeParse({ name, selector, resources, grants });
  if (parsed.success) return { role: parsed.data, errors: null };
  for (const issue of parsed.error.issues) {
    const [head, ...rest] = issue.path;
    const field: Field = head === "selector" || head === "resources" ? head : "name";
    const where = rest.length ? `${rest.join(".")}: ` : "";
    (errors[field] ??= []).push(`${where}${issue.message}`);
  }
  return { role: null, errors };
}
