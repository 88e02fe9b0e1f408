// A node's name as shown (issue 13): the display name an admin gave it, else its hostname.
import { sql } from "drizzle-orm";
import { nodes } from "@mesh/db";

/** Indexed with the id (nodes_shown_name_idx): the fleet's default sort. */
export const shownName = sql<string>`coalesce(${nodes.displayName}, ${nodes.name})`;

/** The short id that tells nodes of one name apart (the first 8 hex digits of the uuid). */
export const shortId = (id: string) => id.slice(0, 8);
