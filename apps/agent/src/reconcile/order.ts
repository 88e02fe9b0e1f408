// The order resources are applied in, pure: parents before children, `after`,
// and packages before services; removal walks the same graph backwards.
import type { ResourceType } from "@mesh/protocol";

export interface OrderNode {
  id: string;
  type: ResourceType;
  subject: string;
  after?: readonly string[];
}

/** Why one resource waits for another; a failure of the one skips the other. */
export interface Need {
  id: string;
  why: "after" | "parent directory";
}

export interface Ordered<N extends OrderNode> {
  order: N[];
  /** What each id waits for by `after` and by parent directory (the implicit package edge only orders). */
  needs: Map<string, Need[]>;
  /** Edges that would have closed a cycle (an `after` against path ancestry); dropped. */
  problems: { id: string; message: string }[];
}

function pathOf(subject: string): string | null {
  return subject.startsWith("path:") ? subject.slice(5) : null;
}

/** The nearest ancestor path among the nodes (later ancestors follow through it). */
function parentNode<N extends OrderNode>(node: N, byPath: ReadonlyMap<string, N>): N | undefined {
  const path = pathOf(node.subject);
  if (!path) return undefined;
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    const parent = byPath.get(path.slice(0, i));
    if (parent) return parent;
  }
  return undefined;
}

/**
 * Depth-first post-order over the dependency graph, otherwise in the given order.
 * Every service comes after every package, unless that package itself comes
 * (through `after` or ancestry) after the service: then the explicit order wins.
 */
export function orderNodes<N extends OrderNode>(nodes: readonly N[]): Ordered<N> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const byPath = new Map<string, N>();
  for (const n of nodes) {
    const p = pathOf(n.subject);
    if (p) byPath.set(p, n);
  }
  const needs = new Map<string, Need[]>();
  for (const n of nodes) {
    const list: Need[] = [];
    const parent = parentNode(n, byPath);
    if (parent) list.push({ id: parent.id, why: "parent directory" });
    for (const id of n.after ?? []) if (byId.has(id) && id !== n.id) list.push({ id, why: "after" });
    needs.set(n.id, list);
  }
  const explicit = (id: string) => (needs.get(id) ?? []).map((d) => d.id);
  const reaches = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length) {
      const id = stack.pop()!;
      if (id === to) return true;
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...explicit(id));
    }
    return false;
  };
  const packages = nodes.filter((n) => n.type === "package");
  const implicit = new Map<string, string[]>();
  for (const s of nodes) {
    if (s.type !== "service") continue;
    implicit.set(
      s.id,
      packages.filter((p) => !reaches(p.id, s.id)).map((p) => p.id),
    );
  }

  const order: N[] = [];
  const problems: Ordered<N>["problems"] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (n: N): void => {
    const s = state.get(n.id);
    if (s === "done") return;
    if (s === "visiting") {
      problems.push({ id: n.id, message: `ordering cycle through "${n.id}" (after against parent directories); applied in declared order` });
      return;
    }
    state.set(n.id, "visiting");
    for (const id of [...explicit(n.id), ...(implicit.get(n.id) ?? [])]) visit(byId.get(id)!);
    state.set(n.id, "done");
    order.push(n);
  };
  for (const n of nodes) visit(n);
  return { order, needs, problems };
}
