// The profile facts a set of selectors reads, as a SQL column: a node's profile is most of its row's
// width, and a selector reads a few keys of it, so a set-based read (a fleet compile, a conflict check,
// a rollout's start, the revoke-offline sweep) selects only those keys ('{}' when none is read).
import { sql, type SQL } from "drizzle-orm";
import { nodes } from "@mesh/db";
import type { Selector } from "@mesh/protocol";

export function profileFacts(selectors: Array<Pick<Selector, "profile">>): SQL<Record<string, unknown>> {
  const keys = [...new Set(selectors.flatMap((s) => Object.keys(s.profile ?? {})))];
  return keys.length === 0
    ? sql<Record<string, unknown>>`'{}'::jsonb`
    : sql<
        Record<string, unknown>
      >`coalesce((select jsonb_object_agg(p.key, p.value) from jsonb_each(${nodes.profile}) p where p.key in (select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb))), '{}'::jsonb)`;
}
