"use client";
// A role's staged rollouts on its page (issue 14): newest first, polled like other live views; the
// active one (running, paused or halted) shown in detail, or any other one picked from the list.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Section } from "../section";
import { RelativeTime } from "../relative-time";
import { ErrorState, LoadingState } from "../states";
import { RolloutDetail } from "./rollout-detail";
import { RolloutStateBadge, actorText, isActive } from "./rollout-state";

export function RoleRollouts({ name, isAdmin }: { name: string; isAdmin: boolean }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.rollout.list.queryOptions({ role: name }, { refetchInterval: 2000 }));
  const [picked, setPicked] = useState<string | null>(null);
  const items = list.data?.items ?? [];
  const shown = picked ?? items.find((r) => isActive(r.state))?.id ?? items[0]?.id ?? null;

  return (
    <div id="rollouts">
      <Section title="Rollouts" className="mt-4">
        {list.isError ? (
          <ErrorState error={list.error} title="Could not load the rollouts" />
        ) : !list.data ? (
          <LoadingState label="Loading rollouts…" />
        ) : items.length === 0 ? (
          <p className="text-sm text-slate-700">No staged rollout of this role yet: saves so far went to every node at once.</p>
        ) : (
          <div className="grid gap-4 lg:grid-cols-[minmax(0,1fr)_minmax(0,2fr)]">
            <ul data-testid="rollout-list" className="divide-y divide-slate-200 text-sm">
              {items.map((r) => (
                <li key={r.id} data-testid="rollout-row" data-state={r.state}>
                  <button
                    type="button"
                    aria-current={r.id === shown ? "true" : undefined}
                    onClick={() => setPicked(r.id)}
                    className={`flex w-full flex-wrap items-center gap-x-3 gap-y-1 px-1 py-2 text-left hover:bg-slate-50 ${r.id === shown ? "bg-slate-100" : ""}`}
                  >
                    <span className="font-mono font-semibold">
                      v{r.fromVersion} → v{r.toVersion}
                    </span>
                    <RolloutStateBadge state={r.state} />
                    {r.rollbackOf && <span className="text-xs text-slate-700">rollback</span>}
                    <span>{actorText(r.actor)}</span>
                    <span className="text-slate-600">
                      <RelativeTime at={r.createdAt} />
                    </span>
                  </button>
                </li>
              ))}
            </ul>
            {shown && <RolloutDetail key={shown} id={shown} isAdmin={isAdmin} />}
          </div>
        )}
      </Section>
    </div>
  );
}
