// A plan readable at 10,000 nodes: nodes with the same list of machine changes (and the same
// conflicts) form one group, listed once with its count and a few example nodes. "3 groups of
// nodes: 9,400 unchanged, 580 update index.html, 20 fail: parent directory /srv missing".
import { ALL_AT_ONCE_WARNING_NODES } from "@mesh/protocol";
import type { Conflict } from "../compile/compile-declaration";
import type { MachineChange } from "./classify-changes";

/** Example nodes named per group: enough to look one up, never the fleet. */
export const GROUP_EXAMPLES = 5;

export interface PlanGroup {
  /** One line: "unchanged", "update index-html", "fail: parent directory /srv missing". */
  label: string;
  count: number;
  examples: Array<{ id: string; name: string }>;
  /** The changes that do something (unchanged resources left out). */
  changes: MachineChange[];
  conflicts: Conflict[];
  /** Whether these nodes' hosts have reported at all (without a report the verbs come from declarations only). */
  reported: boolean;
  /** What will certainly fail: conflicts, and resources whose parent directory is missing. */
  fails: string[];
}

export interface GroupShape {
  changes: MachineChange[];
  conflicts: Conflict[];
  reported: boolean;
}

/** The group one node falls in, as a key (computed once per distinct shape, not per node). */
export function groupKey(shape: GroupShape): string {
  return JSON.stringify([shape.reported, shape.conflicts, shape.changes]);
}

function failsOf(shape: GroupShape): string[] {
  return [
    ...shape.conflicts.map((c) => `conflict on ${c.key} (${c.roles.join(" vs ")}): the node gets nothing new`),
    ...shape.changes.flatMap((c) => (c.fails ? [`${c.action} ${c.id}: ${c.fails}`] : [])),
  ];
}

function labelOf(shape: GroupShape, fails: string[]): string {
  if (fails.length)
    return `fail: ${
      shape.conflicts.length
        ? `conflict on ${shape.conflicts.map((c) => c.key).join(", ")}`
        : shape.changes
            .filter((c) => c.fails)
            .map((c) => c.fails!.replace(/ at the last report$/, ""))
            .filter((f, i, all) => all.indexOf(f) === i)
            .join("; ")
    }`;
  if (shape.changes.length === 0) return "unchanged";
  const parts = shape.changes.slice(0, 3).map((c) => `${c.action} ${c.id}`);
  return parts.join(", ") + (shape.changes.length > 3 ? `, and ${shape.changes.length - 3} more` : "");
}

export class PlanGrouper {
  private readonly groups = new Map<string, PlanGroup>();

  /** `shape.changes` must already leave out the unchanged ones. */
  add(key: string, shape: GroupShape, node: { id: string; name: string }): void {
    let group = this.groups.get(key);
    if (!group) {
      const fails = failsOf(shape);
      this.groups.set(
        key,
        (group = { label: labelOf(shape, fails), count: 0, examples: [], changes: shape.changes, conflicts: shape.conflicts, reported: shape.reported, fails }),
      );
    }
    group.count++;
    if (group.examples.length < GROUP_EXAMPLES) group.examples.push(node);
  }

  /** Largest first; ties in label order. */
  list(): PlanGroup[] {
    return [...this.groups.values()].sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
  }
}

/** "3 groups of nodes: 9,400 unchanged, 580 update index-html, 20 fail: parent directory /srv missing". */
export function planSummary(groups: PlanGroup[]): string {
  const n = (x: number) => x.toLocaleString("en");
  return `${groups.length} group${groups.length === 1 ? "" : "s"} of nodes: ${groups.map((g) => `${n(g.count)} ${g.label}`).join(", ")}`;
}

/** The warning a change reaching many nodes at once carries (issue 14: the all-at-once escape hatch is warned about). */
export function allAtOnceWarning(reached: number): string | null {
  if (reached <= ALL_AT_ONCE_WARNING_NODES) return null;
  return `This change reaches ${reached.toLocaleString("en")} nodes (more than ${ALL_AT_ONCE_WARNING_NODES}): saved all at once, every one of them gets it within seconds. A staged rollout (a canary, then waves) stops a bad change early.`;
}
