// A node's "last seen", derived (issue 11: an idle link writes nothing). While a gateway holds the
// node's link (nodes.gateway_id set) it is that gateway's own heartbeat: the gateway pings its links
// every 15 s and drops silent ones, and beats every 5 s, so its beat vouches for every link it holds.
// Otherwise it is nodes.last_seen_at, written on transitions (connect, disconnect, release).
// Every reader that shows or sorts by last seen uses this one expression.
import { sql } from "drizzle-orm";
import { gateways, nodes } from "@mesh/db";

/**
 * The derived last seen of the row of `nodes` in scope. A gateway row gone (swept, in the same
 * transaction as its nodes' release) falls back to the stored time.
 */
export const lastSeenAt = sql<Date | null>`coalesce((select ${gateways.heartbeatAt} from ${gateways} where ${gateways.id} = ${nodes.gatewayId}), ${nodes.lastSeenAt})`.mapWith(nodes.lastSeenAt);
