// The plan of a label edit, before it is saved (node.planLabels): roles gained and lost, what
// happens to each resource on the machine as its host last reported it (created, updated with a
// content diff or before/after, adopted, removed, certain to fail), and the conflicts it would add.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { PlanChangeLine } from "../plan-change-line";

export type LabelsPlanData = inferRouterOutputs<AppRouter>["node"]["planLabels"];

export function LabelsPlan({ plan }: { plan: LabelsPlanData }) {
  if (!plan.compilable)
    return (
      <p data-testid="labels-plan" className="text-sm text-slate-700">
        This node receives no new declarations in its state: the labels change nothing on the machine.
      </p>
    );
  const roles = [...plan.rolesGained.map((r) => `+${r}`), ...plan.rolesLost.map((r) => `−${r}`)];
  return (
    <div data-testid="labels-plan" aria-live="polite" className="space-y-1 rounded-md border border-slate-200 p-2 text-sm">
      <p data-testid="labels-plan-roles">
        {roles.length === 0
          ? "Roles: no change."
          : `Roles: ${[...plan.rolesGained.map((r) => `gains ${r}`), ...plan.rolesLost.map((r) => `loses ${r}`)].join(", ")}.`}
      </p>
      {!plan.reported && plan.changes.length > 0 && <p className="text-slate-600">The host has not reported yet: from the declarations only.</p>}
      {plan.changes.length === 0 ? (
        <p>Resources: no change.</p>
      ) : (
        <ul className="space-y-0.5">
          {plan.changes.map((c) => (
            <PlanChangeLine key={c.id} change={c} diffs={plan.diffs} testIdPrefix="labels-plan" />
          ))}
        </ul>
      )}
      {plan.newConflicts.length > 0 && (
        <p data-testid="labels-plan-conflicts" className="text-amber-900">
          New conflict: {plan.newConflicts.map((c) => `${c.key} (roles ${c.roles.join(" and ")})`).join("; ")}. Saving needs your confirmation; the node would
          get nothing new.
        </p>
      )}
    </div>
  );
}
