// The plan of a role change: which nodes match, and per node the resources that
// will be created, updated or removed (removals stand out).
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { ContentDiffView } from "../content-diff";
import { NodeLinks } from "../node-links";
import { PLAN_ACTION_STYLE } from "../plan-action-style";

export type RolePlanData = inferRouterOutputs<AppRouter>["role"]["plan"];

const ACTION_STYLE = PLAN_ACTION_STYLE;

export function RolePlan({ plan }: { plan: RolePlanData }) {
  const removals = plan.nodes.reduce((n, p) => n + p.changes.filter((c) => c.action === "remove").length, 0);
  return (
    <div data-testid="role-plan" className="space-y-3 text-sm">
      <p>
        Matches <strong data-testid="plan-matched">{plan.matchedCount}</strong> node{plan.matchedCount === 1 ? "" : "s"}
        {plan.matched.length > 0 && ": "}
        <NodeLinks nodes={plan.matched.slice(0, 20)} total={plan.matchedCount} />.
      </p>
      {plan.changedCount === 0 ? (
        <p className="text-slate-700">Saving changes no node&apos;s declaration.</p>
      ) : (
        <>
          <p>
            Saving changes <strong>{plan.changedCount}</strong> node{plan.changedCount === 1 ? "" : "s"}
            {removals > 0 && (
              <span className="ml-2 rounded bg-rose-100 px-1.5 py-0.5 font-medium text-rose-800">
                {removals} removal{removals === 1 ? "" : "s"}
              </span>
            )}
            .
          </p>
          <ul className="space-y-2">
            {plan.nodes.map((n) => (
              <li key={n.nodeId} data-testid="plan-node" className="rounded border border-slate-200 p-2">
                <p className="font-medium">{n.name}</p>
                {n.conflicts.length > 0 && (
                  <p role="alert" className="text-amber-900">
                    Conflict: {n.conflicts.map((c) => `${c.key} (${c.roles.join(" vs ")})`).join("; ")}: nothing new would be pushed to this node.
                  </p>
                )}
                <ul className="mt-1 space-y-0.5">
                  {n.changes.map((c) => (
                    <li key={c.id} data-testid={`plan-${c.action}`} className="flex flex-wrap items-center gap-2 font-mono text-xs">
                      <span className={`w-16 rounded px-1.5 py-0.5 text-center font-sans font-medium ${ACTION_STYLE[c.action]}`}>{c.action}</span>
                      {c.id} <span className="text-slate-600">{c.subject}</span>
                      {c.diff && plan.diffs[c.diff] && <ContentDiffView diff={plan.diffs[c.diff]!} />}
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
