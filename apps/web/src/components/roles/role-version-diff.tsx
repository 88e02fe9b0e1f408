// What changed between two versions of a role (role.diff): the selector and grants before and
// after, and each resource created, updated (with its content diff) or removed.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { ContentDiffView } from "../content-diff";
import { PLAN_ACTION_STYLE } from "../plan-action-style";

export type RoleDiffData = inferRouterOutputs<AppRouter>["role"]["diff"];

function BeforeAfter({ label, before, after }: { label: string; before: unknown; after: unknown }) {
  return (
    <div data-testid={`diff-${label.toLowerCase()}`}>
      <p className="font-medium">{label} changed</p>
      <div className="mt-1 grid gap-2 sm:grid-cols-2">
        {(
          [
            ["before", before],
            ["after", after],
          ] as const
        ).map(([side, value]) => (
          <div key={side}>
            <p className="text-xs uppercase tracking-wide text-slate-600">{side}</p>
            <pre
              tabIndex={0}
              className={`overflow-auto rounded border p-1.5 text-xs ${side === "before" ? "border-rose-200 bg-rose-50" : "border-emerald-200 bg-emerald-50"}`}
            >
              {value === null ? "(no role)" : JSON.stringify(value, null, 2)}
            </pre>
          </div>
        ))}
      </div>
    </div>
  );
}

export function RoleVersionDiff({ diff }: { diff: RoleDiffData }) {
  const same = !diff.selector && !diff.grants && diff.resources.length === 0;
  if (same)
    return (
      <p data-testid="role-diff-same" className="text-sm text-slate-700">
        The two versions have the same content.
      </p>
    );
  return (
    <div data-testid="role-diff" className="space-y-3 text-sm">
      {diff.selector && <BeforeAfter label="Selector" before={diff.selector.before} after={diff.selector.after} />}
      {diff.grants && <BeforeAfter label="Grants" before={diff.grants.before} after={diff.grants.after} />}
      {diff.resources.length > 0 && (
        <ul className="space-y-0.5" aria-label="Resources changed">
          {diff.resources.map((c) => (
            <li key={c.id} data-testid={`diff-${c.action}`} className="flex flex-wrap items-center gap-2 font-mono text-xs">
              <span className={`w-16 rounded px-1.5 py-0.5 text-center font-sans font-medium ${PLAN_ACTION_STYLE[c.action]}`}>{c.action}</span>
              {c.id} <span className="text-slate-600">{c.subject}</span>
              {c.diff && diff.diffs[c.diff] && <ContentDiffView diff={diff.diffs[c.diff]!} />}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
