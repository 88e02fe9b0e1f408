// A node's lifecycle states (decision 0005), defined once: the database stores them, the api
// filters and counts by them, the dashboard lists them and offers actions by them.
import { z } from "zod";

/**
 * `pending`: a machine that enrolled claiming to be a live node (same machine-id) without
 * proof of that node's key; it waits for an admin to approve or reject the replacement.
 */
export const NODE_STATES = ["pending", "enrolled", "disconnected", "retiring", "retired", "revoked"] as const;
export const NodeState = z.enum(NODE_STATES);
export type NodeState = z.infer<typeof NodeState>;

/** A node in service, linked or not: it gets declarations compiled, and may be relabelled, reconciled now or retired. */
export const LIVE_NODE_STATES = ["enrolled", "disconnected"] as const satisfies readonly NodeState[];

export function isLive(state: string): state is (typeof LIVE_NODE_STATES)[number] {
  return (LIVE_NODE_STATES as readonly string[]).includes(state);
}
