// Postgres text cannot hold U+0000, so a NUL in any string (or key) that crosses a
// boundary is refused at the edge with the field named, instead of failing in the database.

/** The path of the first string or key holding a NUL ("(root)" for the value itself), or null. */
export function findNul(value: unknown): string | null {
  // Iterative: a deeply nested body must not overflow the stack.
  const stack: Array<[unknown, string]> = [[value, ""]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("\u0000")) return path || "(root)";
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (v !== null && typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        const at = path ? `${path}.${k}` : k;
        if (k.includes("\u0000")) return at.replace(/\u0000/g, "\\0");
        stack.push([child, at]);
      }
    }
  }
  return null;
}

/** For a boundary schema's superRefine: one issue naming the first field holding a NUL. */
export function refineNulFree(value: unknown, ctx: { addIssue(issue: { code: "custom"; message: string; path?: PropertyKey[] }): void }): void {
  const path = findNul(value);
  if (path) ctx.addIssue({ code: "custom", message: "contains a NUL character (\\u0000), which is not accepted", path: path === "(root)" ? [] : path.split(".") });
}

export const nulMessage = (path: string) => `${path}: contains a NUL character (\\u0000), which is not accepted`;
