// Pure: which affected nodes go in which wave. The canary (wave 0) is a count, a share or the nodes a
// selector picks, linked nodes first (a node that is connected now reports soonest); then waves of a size or
// a share of all the affected nodes, in id order (stable, so a plan can be read back and compared).
import type { StagedRolloutPolicy } from "@mesh/protocol";
import { matchesSelector, type NodeFacts } from "../compile/selector";

export interface WaveCandidate extends NodeFacts {
  id: string;
  linked: boolean;
}

const share = (percent: number, total: number) => Math.max(1, Math.ceil((percent * total) / 100));

/** Wave number per node id, and how many waves there are. An empty input makes no waves. */
export function planWaves(nodes: WaveCandidate[], policy: StagedRolloutPolicy): { waveOf: Map<string, number>; waves: number } {
  const waveOf = new Map<string, number>();
  const total = nodes.length;
  if (total === 0) return { waveOf, waves: 0 };
  const byId = [...nodes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let canary: WaveCandidate[];
  if ("selector" in policy.canary) {
    const selector = policy.canary.selector;
    canary = byId.filter((n) => matchesSelector(selector, n));
    // A selector that picks none of the nodes this change reaches: one node, so the change is still tried small first.
    if (canary.length === 0) canary = [byId.find((n) => n.linked) ?? byId[0]!];
  } else {
    const size = Math.min(total, "count" in policy.canary ? policy.canary.count : share(policy.canary.percent, total));
    canary = [...byId.filter((n) => n.linked), ...byId.filter((n) => !n.linked)].slice(0, size);
  }
  for (const n of canary) waveOf.set(n.id, 0);
  const rest = byId.filter((n) => !waveOf.has(n.id));
  const size = "size" in policy.waves ? policy.waves.size : share(policy.waves.percent, total);
  rest.forEach((n, i) => waveOf.set(n.id, 1 + Math.floor(i / size)));
  return { waveOf, waves: 1 + Math.ceil(rest.length / size) };
}
