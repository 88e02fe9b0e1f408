// The audit events of grants issued or revoked together: exact while one node is concerned, one
// event with counts when many are (a fleet-wide path writes no event per node; the grants table
// keeps each row with its times).
import type { EventInput } from "../services/record-event";

/** A summary event names at most this many principals. */
const TARGETS_IN_EVENT = 50;

/**
 * One event per grant while the change touches one node (its audit trail stays exact); one
 * event with counts when it touches many (the grants table keeps each row and its times).
 */
export function grantEvents(
  actor: string,
  action: string,
  list: Array<{ nodeId: string; provider: string; principal: string }>,
  data: Record<string, unknown>,
): EventInput[] {
  if (list.length === 0) return [];
  const target = (g: { provider: string; principal: string }) => `${g.provider}:${g.principal}`;
  const nodeIds = new Set(list.map((g) => g.nodeId));
  if (nodeIds.size === 1) return list.map((g) => ({ actor, action, nodeId: g.nodeId, target: target(g), ...(Object.keys(data).length ? { data } : {}) }));
  return [{ actor, action, data: { ...data, grants: list.length, nodes: nodeIds.size, targets: list.slice(0, TARGETS_IN_EVENT).map(target) } }];
}
