// What one delivery says: one event, the nodes it happened to (a fleet-wide change is one delivery
// with a list, never one per node), bounded so a body stays small whatever the fleet's size.
import type { AlertEvent } from "@mesh/db";

export const NODES_PER_DELIVERY = 500;

export interface AlertNode {
  id: string;
  name: string | null;
  /** Event-specific: offline since, errors count, drift count, conflicting roles. */
  detail?: Record<string, unknown>;
}

export function alertBody(event: AlertEvent | "test", at: Date, nodes: AlertNode[]): string {
  const listed = nodes.slice(0, NODES_PER_DELIVERY);
  return JSON.stringify({
    type: "mesh.alert",
    event,
    at: at.toISOString(),
    count: nodes.length,
    nodes: listed,
    ...(nodes.length > listed.length ? { truncated: true } : {}),
  });
}
