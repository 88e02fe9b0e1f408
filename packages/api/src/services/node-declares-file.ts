// Whether a node may download a file: only when its declaration names the file as a
// `source` (file, package or host resource). The current declaration counts, and so does
// the one before it while the node has not yet reported applying the current one (it may still be applying it).
import { and, eq, inArray } from "drizzle-orm";
import { declarations, nodes, type DbOrTx } from "@mesh/db";

interface WithSource {
  source?: { sha256?: unknown };
}

export function resourcesName(resources: unknown, sha256: string): boolean {
  return Array.isArray(resources) && resources.some((r: WithSource) => r?.source?.sha256 === sha256);
}

export async function nodeDeclaresFile(db: DbOrTx, nodeId: string, sha256: string): Promise<boolean> {
  const [node] = await db.select({ declared: nodes.declaredVersion, applied: nodes.appliedVersion }).from(nodes).where(eq(nodes.id, nodeId));
  if (!node) return false;
  const versions = node.applied < node.declared ? [node.declared, node.declared - 1] : [node.declared];
  const rows = await db
    .select({ resources: declarations.resources })
    .from(declarations)
    .where(and(eq(declarations.nodeId, nodeId), inArray(declarations.version, versions)));
  return rows.some((row) => resourcesName(row.resources, sha256));
}
