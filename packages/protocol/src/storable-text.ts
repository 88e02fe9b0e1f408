// Text Postgres cannot store: a NUL (U+0000) in text or jsonb, or a lone UTF-16 surrogate
// (invalid in jsonb, silently mangled in text). Refused at the edge with the field named, never a 500.

export interface UnstorableText {
  /** Dotted path of the field ("(root)" for the value itself). */
  path: string;
  message: string;
}

function problemOf(s: string): string | null {
  if (s.includes("\u0000")) return "contains a NUL character (\\u0000), which is not accepted";
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return "is not valid Unicode (a lone surrogate), which is not accepted";
  return null;
}

/** The first string or key (depth first) that Postgres cannot store, or null. */
export function findUnstorableText(value: unknown): UnstorableText | null {
  // Iterative: a deeply nested body must not overflow the stack.
  const stack: Array<[unknown, string]> = [[value, ""]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      const message = problemOf(v);
      if (message) return { path: path || "(root)", message };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v).reverse()) {
        const at = path ? `${path}.${k}` : k;
        const message = problemOf(k);
        if (message) return { path: at.replaceAll("\u0000", "\\0"), message: `(a key) ${message}` };
        stack.push([child, at]);
      }
    }
  }
  return null;
}

/** One line for a refusal: "labels.a: contains a NUL character ...". */
export const describeUnstorableText = (found: UnstorableText) => `${found.path}: ${found.message}`;

/** For a boundary schema's superRefine: one issue naming the first field Postgres cannot store. */
export function refineStorableText(value: unknown, ctx: { addIssue(issue: { code: "custom"; message: string; path?: PropertyKey[] }): void }): void {
  const found = findUnstorableText(value);
  if (found) ctx.addIssue({ code: "custom", message: found.message, path: found.path === "(root)" ? [] : found.path.split(".") });
}
