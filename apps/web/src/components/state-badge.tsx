// A node's state, coloured the same way everywhere (badges, counts, filters).
import type { NodeState } from "@mesh/protocol";

/** One colour for each of the protocol's states (a new state does not typecheck until it has one). */
export const STATE_COLOURS: Record<NodeState, string> = {
  pending: "bg-violet-100 text-violet-900 ring-violet-200",
  enrolled: "bg-emerald-100 text-emerald-800 ring-emerald-200",
  disconnected: "bg-amber-100 text-amber-800 ring-amber-200",
  retiring: "bg-sky-100 text-sky-800 ring-sky-200",
  retired: "bg-slate-100 text-slate-700 ring-slate-200",
  revoked: "bg-rose-100 text-rose-800 ring-rose-200",
};

/**
 * The stored state `pending` is a replacement claim awaiting an admin (decision 0005); in the
 * dashboard "pending" is a health (enrolled, never linked), so the state reads "claim".
 */
export const STATE_LABELS: Record<string, string> = { pending: "claim" };
export const stateLabel = (state: string) => STATE_LABELS[state] ?? state;

export function StateBadge({ state }: { state: string }) {
  return (
    <span
      data-testid="node-state"
      className={`inline-flex rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${STATE_COLOURS[state as NodeState] ?? STATE_COLOURS.retired}`}
    >
      {stateLabel(state)}
    </span>
  );
}
