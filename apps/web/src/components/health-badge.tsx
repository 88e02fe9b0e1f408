// A node's health as the API computes it (packages/api services/node-health.ts): rendered, never
// derived here. Colour plus words (never colour alone); the same everywhere (list, counters, node page).
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";

export type NodeHealth = NonNullable<inferRouterOutputs<AppRouter>["node"]["list"]["items"][number]["health"]>;

/** Every health, worst first (the order of the counters), with its colour and what it means. */
export const HEALTH: Record<NodeHealth, { colour: string; meaning: string }> = {
  conflicted: { colour: "bg-orange-100 text-orange-900 ring-orange-300", meaning: "two roles declare a resource differently: nothing new is pushed" },
  failing: { colour: "bg-rose-100 text-rose-900 ring-rose-300", meaning: "its current declaration failed, was skipped in part, or was refused" },
  stale: { colour: "bg-slate-200 text-slate-900 ring-slate-400", meaning: "not linked, or nothing heard for 15 minutes" },
  drifted: { colour: "bg-amber-100 text-amber-900 ring-amber-300", meaning: "applied, and the machine differs from it" },
  applying: { colour: "bg-sky-100 text-sky-900 ring-sky-300", meaning: "linked; its current declaration is not applied yet" },
  pending: { colour: "bg-violet-100 text-violet-900 ring-violet-300", meaning: "enrolled, never linked" },
  healthy: { colour: "bg-emerald-100 text-emerald-900 ring-emerald-300", meaning: "applied, nothing failed or drifted, heard from recently" },
};
export const HEALTHS = Object.keys(HEALTH) as NodeHealth[];

export function HealthBadge({ health }: { health: NodeHealth | null }) {
  if (!health) return <span className="text-xs text-slate-600">–</span>;
  return (
    <span
      data-testid="node-health"
      data-health={health}
      title={HEALTH[health].meaning}
      className={`inline-flex rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${HEALTH[health].colour}`}
    >
      {health}
    </span>
  );
}
