// One resource of a plan: its verb, id and subject; for an update the before/after of what the
// host holds (mode, owner, version, running…) and the content diff; what will certainly fail and
// what failed at the host's last reconcile.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { ContentDiffView } from "./content-diff";
import { PLAN_ACTION_STYLE } from "./plan-action-style";

type Plan = inferRouterOutputs<AppRouter>["role"]["plan"];
export type PlanChange = Plan["groups"][number]["changes"][number];
export type PlanDiffs = Plan["diffs"];

const say = (v: unknown) => (v === null || v === undefined ? "none" : String(v));

export function PlanChangeLine({ change: c, diffs, testIdPrefix }: { change: PlanChange; diffs: PlanDiffs; testIdPrefix: string }) {
  return (
    <li data-testid={`${testIdPrefix}-${c.action}`} className="flex flex-wrap items-center gap-2 font-mono text-xs">
      <span className={`w-20 rounded px-1.5 py-0.5 text-center font-sans font-medium ${PLAN_ACTION_STYLE[c.action]}`}>{c.restores ? "restore" : c.action}</span>
      {c.id} <span className="text-slate-600">{c.subject}</span>
      {c.fields?.map((f) => (
        <span key={f.key} className="font-sans text-slate-700">
          {f.key}: {say(f.before)} → {say(f.after)}
        </span>
      ))}
      {c.observed && <span className="font-sans text-slate-700">host observed: {c.observed}</span>}
      {c.fails && (
        <span data-testid="plan-fails" className="rounded bg-rose-100 px-1.5 py-0.5 font-sans font-medium text-rose-900">
          will fail: {c.fails}
        </span>
      )}
      {c.failedLastTime && <span className="font-sans text-amber-900">failed last time: {c.failedLastTime}</span>}
      {c.diff && diffs[c.diff] && <ContentDiffView diff={diffs[c.diff]!} />}
    </li>
  );
}
