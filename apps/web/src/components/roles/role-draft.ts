// The editor's text fields checked against the protocol's Role schema; each
// issue is attached to the field it belongs to (name, selector or resources).
import { Role, type RoleInput } from "@mesh/protocol";

export type Field = "name" | "selector" | "resources" | "revokeOfflineAfter";
/** `role` is the parsed role (for the plan); `asWritten` is what is saved: the JSON as typed, key order and all. */
export type DraftResult = { role: Role; asWritten: RoleInput; errors: null } | { role: null; asWritten: null; errors: Partial<Record<Field, string[]>> };

/** The revoke-when-offline field as typed: empty is off (left out), bare digits are minutes, else a duration ("30d"). */
export function offlineLimit(text: string): number | string | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  return /^\d+$/.test(t) ? Number(t) : t;
}

/** `grants` are not edited here; they are carried over so saving keeps them. */
export function checkDraft(name: string, selectorText: string, resourcesText: string, grants: unknown = [], revokeOfflineText = ""): DraftResult {
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
  if (Object.keys(errors).length) return { role: null, asWritten: null, errors };
  const revokeOfflineAfter = offlineLimit(revokeOfflineText);
  const asWritten = { name, selector, resources, grants, ...(revokeOfflineAfter !== undefined ? { revokeOfflineAfter } : {}) };
  const parsed = Role.safeParse(asWritten);
  if (parsed.success) return { role: parsed.data, asWritten: asWritten as RoleInput, errors: null };
  for (const issue of parsed.error.issues) {
    const [head, ...rest] = issue.path;
    const field: Field = head === "selector" || head === "resources" || head === "revokeOfflineAfter" ? head : "name";
    const where = rest.length ? `${rest.join(".")}: ` : "";
    (errors[field] ??= []).push(`${where}${issue.message}`);
  }
  return { role: null, asWritten: null, errors };
}
