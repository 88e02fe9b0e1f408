// The declaration compiler: pure. The union of the resources of every role whose
// selector matches the node, in a deterministic order, with a content hash.
import type { Resource, Role } from "@mesh/protocol";
import { canonicalJson, resourceSubject } from "@mesh/protocol";
import { contentHash } from "./hash";
import { matchesSelector, type NodeFacts } from "./selector";

export interface Conflict {
  /** The resource id or subject (path, package, unit) two roles declare differently. */
  key: string;
  roles: [string, string];
}

export interface CompiledDeclaration {
  resources: Resource[];
  hash: string;
  roles: string[];
  conflicts: Conflict[];
}

export function declarationHash(resources: Resource[]): string {
  return contentHash(resources);
}

export function compileDeclaration(node: NodeFacts, roles: Role[]): CompiledDeclaration {
  const matched = roles.filter((r) => matchesSelector(r.selector, node)).sort((a, b) => a.name.localeCompare(b.name));
  const byId = new Map<string, { resource: Resource; role: string; json: string }>();
  const bySubject = new Map<string, { id: string; role: string }>();
  const conflicts: Conflict[] = [];
  for (const role of matched) {
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
  // Sorted by subject then id: deterministic whatever order the roles came in.
  const resources = [...byId.values()]
    .map((e) => e.resource)
    .sort((a, b) => {
      const sa = resourceSubject(a);
      const sb = resourceSubject(b);
      return sa === sb ? a.id.localeCompare(b.id) : sa < sb ? -1 : 1;
    });
  return { resources, hash: declarationHash(resources), roles: matched.map((r) => r.name), conflicts };
}
