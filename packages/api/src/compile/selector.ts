// Selector matching: pure. A node matches when every label and every profile
// fact the selector names is equal on the node.
import type { Selector } from "@mesh/protocol";

export interface NodeFacts {
  labels: Record<string, string>;
  profile: Record<string, unknown>;
}

export function matchesSelector(selector: Selector, node: NodeFacts): boolean {
  for (const [key, value] of Object.entries(selector.labels ?? {})) {
    if (node.labels[key] !== value) return false;
  }
  for (const [key, value] of Object.entries(selector.profile ?? {})) {
    if (node.profile[key] !== value) return false;
  }
  return true;
}
