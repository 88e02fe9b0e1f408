// The plan of a role change: which nodes match, and what saving does on the machines, told from
// what each host last reported: nodes with the same changes form one group (count, a few
// example nodes, the changes), readable at 10,000 nodes; what will certainly fail stands out,
// and a change reaching many nodes at once is warned about.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { NodeLinks } from "../node-links";
import { PlanChangeLine } from "../plan-change-line";

export type RolePlanData = inferRouterOutputs<AppRouter>["role"]["plan"];

/** `allAtOnce`: the save goes to every node at once (its warning shows only then). */
export function RolePlan({ plan, allAtOnce = true }: { plan: RolePlanData; allAtOnce?: boolean }) {
  const removals = plan.groups.reduce((n, g) => n + g.count * g.changes.filter((c) => c.action === "remove").length, 0);
  const failing = plan.groups.reduce((n, g) => n + (g.fails.length ? g.count : 0), 0);
  return (
    <div data-testid="role-plan" className="space-y-3 text-sm">
      <p>
        Matches <strong data-testid="plan-matched">{plan.matchedCount}</strong> node{plan.matchedCount === 1 ? "" : "s"}
        {plan.matched.length > 0 && ": "}
        <NodeLinks nodes={plan.matched.slice(0, 20)} total={plan.matchedCount} />.
      </p>
      {allAtOnce && plan.allAtOnceWarning && (
        <p data-testid="plan-all-at-once" role="alert" className="rounded border border-amber-300 bg-amber-50 p-2 text-amber-900">
          {plan.allAtOnceWarning}
        </p>
      )}
      {plan.changedCount === 0 ? (
        <p className="text-slate-700">Saving changes nothing on any node.</p>
      ) : (
        <>
          <p data-testid="plan-summary">
            Saving changes <strong>{plan.changedCount}</strong> node{plan.changedCount === 1 ? "" : "s"}
            {removals > 0 && (
              <span className="ml-2 rounded bg-rose-100 px-1.5 py-0.5 font-medium text-rose-800">
                {removals} removal{removals === 1 ? "" : "s"}
              </span>
            )}
            {failing > 0 && <span className="ml-2 rounded bg-rose-600 px-1.5 py-0.5 font-medium text-white">{failing} will fail</span>}. {plan.summary}.
          </p>
          <ul className="space-y-2">
            {plan.groups.map((g, i) => (
              <li key={i} data-testid="plan-group" className="rounded border border-slate-200 p-2">
                <p className="font-medium">
                  <span data-testid="plan-group-count">{g.count}</span> node{g.count === 1 ? "" : "s"}: {g.label}
                  {!g.reported && <span className="ml-2 font-normal text-slate-600">(not reported yet: from the declarations only)</span>}
                </p>
                <p className="text-xs text-slate-700">
                  e.g. <NodeLinks nodes={g.examples} total={g.count} />
                </p>
                {g.conflicts.length > 0 && (
                  <p role="alert" className="text-amber-900">
                    Conflict: {g.conflicts.map((c) => `${c.key} (${c.roles.join(" vs ")})`).join("; ")}: nothing new would be pushed to these nodes.
                  </p>
                )}
                {g.changes.length > 0 && (
                  <ul className="mt-1 space-y-0.5">
                    {g.changes.map((c) => (
                      <PlanChangeLine key={c.id} change={c} diffs={plan.diffs} testIdPrefix="plan" />
                    ))}
                  </ul>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
