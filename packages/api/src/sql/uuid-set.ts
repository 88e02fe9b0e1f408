// A set of ids as one bound parameter: `x in ${uuidSet(ids)}`. A list of 10,000 ids as
// separate parameters is slow to bind and stops at the protocol's 65,535; one jsonb array is
// one parameter whatever its length (the fleet-wide paths pass every node at once).
import { sql, type SQL } from "drizzle-orm";

export function uuidSet(ids: Iterable<string>): SQL {
  return sql`(select jsonb_array_elements_text(${JSON.stringify([...ids])}::jsonb)::uuid)`;
}
