// The checks a declaration must pass on this machine before it is taken: every
// path stays under --root once symlinks are resolved, and no two paths land on one place.
import type { Declaration } from "@mesh/protocol";
import { reasonOf } from "../host-error";
import type { Root } from "../resources/root";

/** One line per problem; empty when the declaration may be taken. */
export async function checkDeclaration(declaration: Declaration, root: Root): Promise<string[]> {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const realpaths = new Map<string, Promise<string>>();
  for (const r of declaration.resources) {
    if (!("path" in r)) continue;
    let hostPath: string;
    try {
      hostPath = await root.resolve(r.path, realpaths);
    } catch (err) {
      problems.push(`${r.id}: ${reasonOf(err)}`);
      continue;
    }
    const other = seen.get(hostPath);
    if (other !== undefined) problems.push(`${r.id}: ${r.path} is the same path as "${other}" once symlinks are resolved`);
    else seen.set(hostPath, r.id);
  }
  return problems;
}
