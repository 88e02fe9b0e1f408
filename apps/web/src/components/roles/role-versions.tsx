"use client";
// A role's versions on its page (issue 14): newest first, older ones a page at a time; who saved
// each, when and why, the current one marked. Pick any two to see what changed between them;
// admins may roll back to any version (a confirmation shows the diff and the plan first).
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { Section } from "../section";
import { RelativeTime } from "../relative-time";
import { ErrorState, LoadingState } from "../states";
import { RoleVersionDiff } from "./role-version-diff";
import { RoleRollbackDialog } from "./role-rollback-dialog";

const PAGE = 20;

export function RoleVersions({ name, isAdmin }: { name: string; isAdmin: boolean }) {
  const trpc = useTRPC();
  const versions = useInfiniteQuery(
    trpc.role.versions.infiniteQueryOptions({ name, limit: PAGE }, { getNextPageParam: (last) => last.nextCursor ?? undefined }),
  );
  const items = versions.data?.pages.flatMap((p) => p.items) ?? [];
  const first = versions.data?.pages[0];
  const newest = items[0]?.version;
  // The pair compared: by default the newest and the one before it.
  const [picked, setPicked] = useState<{ from?: number; to?: number }>({});
  const to = picked.to ?? newest;
  const from = picked.from ?? items[1]?.version ?? newest;
  const diff = useQuery({
    ...trpc.role.diff.queryOptions({ name, from: from ?? 1, to: to ?? 1 }),
    enabled: from !== undefined && to !== undefined && from !== to,
  });
  const [rollbackTo, setRollbackTo] = useState<number | null>(null);

  return (
    <Section title="Versions" className="mt-4">
      {versions.isError ? (
        <ErrorState error={versions.error} title="Could not load the versions" />
      ) : !first ? (
        <LoadingState label="Loading versions…" />
      ) : (
        <div className="grid gap-4 lg:grid-cols-2">
          <div>
            {!first.exists && <p className="mb-2 text-sm text-amber-900">This role is deleted: rolling back to a version makes it again.</p>}
            <ul data-testid="role-versions" className="divide-y divide-slate-200 text-sm">
              {items.map((v) => (
                <li key={v.version} data-testid="role-version" data-version={v.version} className="flex flex-wrap items-center gap-x-3 gap-y-1 py-2">
                  <span className="font-mono font-semibold">v{v.version}</span>
                  {v.current && <span className="rounded bg-emerald-100 px-1.5 py-0.5 text-xs font-medium text-emerald-800">current</span>}
                  <span title={v.actor}>{v.actorName}</span>
                  <span className="text-slate-600">
                    <RelativeTime at={v.createdAt} />
                  </span>
                  <span className="text-slate-600">
                    {v.resources} resource{v.resources === 1 ? "" : "s"}
                  </span>
                  <span className="ml-auto flex items-center gap-3">
                    <label className="flex items-center gap-1 text-xs">
                      <input
                        type="radio"
                        name={`${name}-diff-from`}
                        checked={from === v.version}
                        onChange={() => setPicked((p) => ({ ...p, from: v.version }))}
                        aria-label={`Compare from v${v.version}`}
                      />
                      from
                    </label>
                    <label className="flex items-center gap-1 text-xs">
                      <input
                        type="radio"
                        name={`${name}-diff-to`}
                        checked={to === v.version}
                        onChange={() => setPicked((p) => ({ ...p, to: v.version }))}
                        aria-label={`Compare to v${v.version}`}
                      />
                      to
                    </label>
                    {isAdmin && !v.current && (
                      <Button className="px-2 py-1 text-xs" onClick={() => setRollbackTo(v.version)}>
                        Roll back to this version<span className="sr-only"> (v{v.version})</span>
                      </Button>
                    )}
                  </span>
                  {v.message && (
                    <p className="basis-full text-slate-700" data-testid="role-version-message">
                      {v.message}
                    </p>
                  )}
                </li>
              ))}
            </ul>
            {versions.hasNextPage && (
              <Button className="mt-2" disabled={versions.isFetchingNextPage} onClick={() => void versions.fetchNextPage()}>
                {versions.isFetchingNextPage ? "Loading…" : "Older versions"}
              </Button>
            )}
          </div>
          <div aria-live="polite">
            <h3 className="mb-2 text-sm font-semibold">{from === to ? "Pick two different versions to compare" : `Changes from v${from} to v${to}`}</h3>
            {from === to ? null : diff.isError ? (
              <ErrorState error={diff.error} title="Could not diff" />
            ) : !diff.data ? (
              <LoadingState label="Diffing…" />
            ) : (
              <RoleVersionDiff diff={diff.data} />
            )}
          </div>
        </div>
      )}
      {rollbackTo !== null && newest !== undefined && (
        <RoleRollbackDialog name={name} version={rollbackTo} from={first?.currentVersion ?? newest} onClose={() => setRollbackTo(null)} />
      )}
    </Section>
  );
}
