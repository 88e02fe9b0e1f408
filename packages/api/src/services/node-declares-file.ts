// Whether a node may download a file: only when its declaration names the file as a
// `source` (file, package or host resource). The current declaration counts, and so does
// the one before it for a while, when the node has not yet reported applying the current one (it may still be applying it).
import { eq } from "drizzle-orm";
import { nodes, type DbOrTx } from "@mesh/db";
import { nodeDeclarationVersions } from "./declaration-store";

interface WithSource {
  source?: { sha256?: unknown };
}

/**
 * How long after a new declaration the previous one's files stay downloadable for a node
 * that has not reported applying the new one: long enough to finish applying the previous
 * one, short enough that a host reporting an old version for ever does not keep them.
 */
export const PREVIOUS_DECLARATION_GRACE_MS = 15 * 60_000;

export function resourcesName(resources: unknown, sha256: string): boolean {
  return Array.isArray(resources) && resources.some((r: WithSource) => r?.source?.sha256 === sha256);
}

export async function nodeDeclaresFile(db: DbOrTx, nodeId: string, sha256: string, now: () => number = Date.now): Promise<boolean> {
  const [node] = await db.select({ declared: nodes.declaredVersion, applied: nodes.appliedVersion }).from(nodes).where(eq(nodes.id, nodeId));
  if (!node) return false;
  const rows = await nodeDeclarationVersions(db, nodeId, [node.declared, node.declared - 1]);
  const current = rows.find((r) => r.version === node.declared);
  const previousCounts = node.applied < node.declared && current !== undefined && now() - current.createdAt.getTime() < PREVIOUS_DECLARATION_GRACE_MS;
  return rows.some((row) => (row.version === node.declared || previousCounts) && resourcesName(row.resources, sha256));
}
