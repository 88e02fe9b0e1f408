// The set of nodes one call acts on (reconcile now, bulk actions, forget): named by id, bounded,
// read and locked in one statement whatever their number (never a query per node).
import { z } from "zod";
import { sql } from "drizzle-orm";
import { nodes, type DbOrTx, type NodeState } from "@mesh/db";
import { MeshError } from "../errors";
import { shownName } from "./node-name";

/** Nodes one call may name: a Fleet page's "all that match" is at most this many. */
export const MAX_NODES_PER_CALL = 1000;
/** Node ids an audit event lists (its counts say how many there were in all). */
export const IDS_IN_EVENT = MAX_NODES_PER_CALL;

export const NodeIds = z
  .array(z.uuid())
  .min(1, "name at least one node")
  .max(MAX_NODES_PER_CALL, `at most ${MAX_NODES_PER_CALL} nodes per call`)
  .transform((ids) => [...new Set(ids)]);

export interface SetNode {
  id: string;
  /** The name shown (the display name, else the hostname): what a refusal names it by. */
  name: string;
  state: NodeState;
  gatewayId: string | null;
  hostFeatures: string[];
  declaredVersion: number;
  labels: Record<string, string>;
}

/** The SQL for "id in these ids", one parameter whatever their number. */
export const idIn = (ids: string[]) => sql`${nodes.id} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)`;

/**
 * Reads every named node in one statement (locked in id order with `lock`, the order a fleet compile
 * takes); an id that names no node refuses the whole call, naming it.
 */
export async function loadNodeSet(tx: DbOrTx, ids: string[], opts: { lock?: boolean } = {}): Promise<SetNode[]> {
  const query = tx
    .select({
      id: nodes.id,
      name: shownName,
      state: nodes.state,
      gatewayId: nodes.gatewayId,
      hostFeatures: nodes.hostFeatures,
      declaredVersion: nodes.declaredVersion,
      labels: nodes.labels,
    })
    .from(nodes)
    .where(idIn(ids))
    .orderBy(nodes.id);
  const rows = opts.lock ? await query.for("update") : await query;
  if (rows.length !== ids.length) {
    const found = new Set(rows.map((r) => r.id));
    const unknown = ids.filter((id) => !found.has(id));
    throw new MeshError("NOT_FOUND", `no node with id ${unknown.slice(0, 5).join(", ")}${unknown.length > 5 ? ` (and ${unknown.length - 5} more)` : ""}`);
  }
  return rows;
}

/** Refuses the whole call when any node is not in one of `states`, naming a few. */
export function requireStates(rows: SetNode[], states: readonly NodeState[], what: string): void {
  const wrong = rows.filter((r) => !states.includes(r.state));
  if (wrong.length === 0) return;
  const named = wrong
    .slice(0, 5)
    .map((r) => `${r.name} is ${r.state}`)
    .join(", ");
  throw new MeshError(
    "CONFLICT",
    `${wrong.length === 1 ? "a node" : `${wrong.length} nodes`} cannot be ${what} (${named}${wrong.length > 5 ? ", …" : ""}); only ${states.join(" or ")} nodes can`,
  );
}
