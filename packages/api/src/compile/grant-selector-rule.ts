// Facts a host asserts cannot buy it secrets: a role that declares grants may select
// only on labels (set by admins and tokens), never on profile facts the host reports.
import type { Role } from "@mesh/protocol";

/** Why a role may not carry its grants, or null when it may. */
export function grantSelectorViolation(role: Pick<Role, "name" | "selector" | "grants">): string | null {
  const profileKeys = Object.keys(role.selector.profile ?? {});
  if ((role.grants ?? []).length === 0 || profileKeys.length === 0) return null;
  return `role ${role.name} declares grants, so its selector may use only labels: profile facts (${profileKeys.join(", ")}) are what a host says about itself, and a host could claim them to receive the grants. Select these nodes by a label instead.`;
}
