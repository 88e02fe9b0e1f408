// The plan of a label edit, before it is saved (node.planLabels): roles gained and lost, the
// resources created, updated (with a content diff) and removed, and the conflicts it would add.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { ContentDiffView } from "../content-diff";
import { PLAN_ACTION_STYLE } from "../plan-action-style";

export type LabelsPlanData = inferRouterOutputs<AppRouter>["node"]["planLabels"];

const ACTION_STYLE = PLAN_ACTION_STYLE;

export function LabelsPlan({ plan }: { plan: LabelsPlanData }) {
  if (!plan.compilable) return <p data-testid="labels-plan" className="text-sm text-slate-700">This node receives no new declarations in its state: the labels change nothing on the machine.</p>;
  const roles = [...plan.rolesGained.map((r) => `+${r}`), ...plan.rolesLost.map((r) => `−${r}`)];
  return (
    <div data-testid="labels-plan" aria-live="polite" className="space-y-1 rounded-md border border-slate-200 p-2 text-sm">
      <p data-testid="labels-plan-roles">{roles.length === 0 ? "Roles: no change." : `Roles: ${[...plan.rolesGained.map((r) => `gains ${r}`), ...plan.rolesLost.map((r) => `loses ${r}`)].join(", ")}.`}</p>
      {plan.changes.length === 0 ? (
        <p>Resources: no change.</p>
      ) : (
        <ul className="space-y-0.5">
          {plan.changes.map((c) => (
            <li key={c.id} data-testid={`labels-plan-${c.action}`} className="flex flex-wrap items-center gap-2 font-mono text-xs">
              <span className={`w-16 rounded px-1.5 py-0.5 text-center font-sans font-medium ${ACTION_STYLE[c.action]}`}>{c.action}</span>
              {c.id} <span className="text-slate-600">{c.subject}</span>
              {c.diff && plan.diffs[c.diff] && <ContentDiffView diff={plan.diffs[c.diff]!} />}
            </li>
          ))}
        </ul>
      )}
      {plan.newConflicts.length > 0 && (
        <p data-testid="labels-plan-conflicts" className="text-amber-900">
          New conflict: {plan.newConflicts.map((c) => `${c.key} (roles ${c.roles.join(" and ")})`).join("; ")}. Saving needs your confirmation; the node would get nothing new.
        </p>
      )}
    </div>
  );
}
