// The declaration compiler: pure. The union of the resources of every role whose
// selector matches the node, in a deterministic order, with a content hash.
import type { GrantDeclaration, Resource, Role } from "@mesh/protocol";
import { canonicalJson, resourceSubject } from "@mesh/protocol";
import { contentHash } from "./hash";
import { matchesSelector, type NodeFacts } from "./selector";
import { grantSelectorViolation } from "./grant-selector-rule";

export interface Conflict {
  /** The resource id or subject (path, package, unit) two roles declare differently. */
  key: string;
  roles: [string, string];
}

export interface CompiledDeclaration {
  resources: Resource[];
  /** Grants the node must hold; each becomes a file resource once issued. */
  grants: GrantDeclaration[];
  hash: string;
  roles: string[];
  conflicts: Conflict[];
}

export function declarationHash(resources: Resource[]): string {
  return contentHash(resources);
}

/** What the compiler gathers before it sorts: each kept resource and grant with the role it came from. */
function gather(node: NodeFacts, roles: Role[]) {
  const matched = roles.filter((r) => matchesSelector(r.selector, node)).sort((a, b) => a.name.localeCompare(b.name));
  const byId = new Map<string, { resource: Resource; role: string; json: string }>();
  const bySubject = new Map<string, { id: string; role: string }>();
  const conflicts: Conflict[] = [];
  const grants = new Map<string, { grant: GrantDeclaration; role: string; json: string }>();
  for (const role of matched) {
    // A role saved before the rule (grants selected by profile facts) issues none.
    for (const grant of grantSelectorViolation(role) ? [] : (role.grants ?? [])) {
      const json = canonicalJson(grant);
      const seen = grants.get(grant.id);
      if (seen && seen.json !== json) conflicts.push({ key: grant.id, roles: [seen.role, role.name] });
      else if (!seen) grants.set(grant.id, { grant, role: role.name, json });
    }
    for (const resource of role.resources) {
      const json = canonicalJson(resource);
      const seen = byId.get(resource.id);
      if (seen) {
        if (seen.json !== json) conflicts.push({ key: resource.id, roles: [seen.role, role.name] });
        continue;
      }
      const subject = resourceSubject(resource);
      const sameSubject = bySubject.get(subject);
      if (sameSubject) {
        conflicts.push({ key: subject, roles: [sameSubject.role, role.name] });
        continue;
      }
      byId.set(resource.id, { resource, role: role.name, json });
      bySubject.set(subject, { id: resource.id, role: role.name });
    }
  }
  return { matched, byId, grants, conflicts };
}

export function compileDeclaration(node: NodeFacts, roles: Role[]): CompiledDeclaration {
  const { matched, byId, grants, conflicts } = gather(node, roles);
  // Sorted by subject then id: deterministic whatever order the roles came in.
  const resources = [...byId.values()]
    .map((e) => e.resource)
    .sort((a, b) => {
      const sa = resourceSubject(a);
      const sb = resourceSubject(b);
      return sa === sb ? a.id.localeCompare(b.id) : sa < sb ? -1 : 1;
    });
  return {
    resources,
    grants: [...grants.values()].map((g) => g.grant).sort((a, b) => a.id.localeCompare(b.id)),
    hash: declarationHash(resources),
    roles: matched.map((r) => r.name),
    conflicts,
  };
}

export interface ResourceOrigins {
  /** The roles whose selectors match the node, by name. */
  roles: string[];
  /** Resource id -> the role it came from (the first role by name that declares it; a grant's file, the role of the grant). */
  origin: Record<string, string>;
}

/**
 * Where each resource of a node's declaration comes from, for the node page. Declarations store
 * only the roles that made them, so this compiles the one node again; never on a fleet path.
 */
export function resourceOrigins(node: NodeFacts, roles: Role[]): ResourceOrigins {
  const { matched, byId, grants } = gather(node, roles);
  const origin: Record<string, string> = {};
  for (const [id, g] of grants) origin[id] = g.role;
  for (const [id, e] of byId) origin[id] = e.role;
  return { roles: matched.map((r) => r.name), origin };
}
