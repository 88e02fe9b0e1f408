"use client";
// The fleet: counts per state, filters, and one server-sorted page of nodes,
// refreshed every 2 s by polling (see docs/decisions/0006-dashboard-access-and-live-updates.md for why).
import Link from "next/link";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useCallback, useDeferredValue, useState } from "react";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { useTRPC } from "../trpc";
import { StateBadge, STATE_COLOURS, stateLabel } from "../state-badge";
import { HealthBadge, HEALTH, HEALTHS } from "../health-badge";
import { FleetFilterBar } from "./fleet-filter-bar";
import { FleetNodeName } from "./fleet-node-name";
import { FleetVersions } from "./fleet-versions";
import { DEFAULT_VIEW, paramsFromView, viewErrors, type FleetSort, type FleetView as View } from "./fleet-url";
import { NODE_STATES, parseLabelFilter, type NodeState } from "@mesh/protocol";
import { RelativeTime } from "../relative-time";
import { LabelChips } from "../label-chips";
import { EmptyState, ErrorState, LoadingState } from "../states";
import { Button } from "../button";
import { PAGE_SIZE, POLL_MS } from "./fleet-paging";
import { SelectionBar, type BulkAction } from "./selection-bar";
import { BulkActionsDialog } from "./bulk-actions-dialog";
import type { BulkSelection } from "./bulk-selection";

type Outputs = inferRouterOutputs<AppRouter>;
export type FleetList = Outputs["node"]["list"];
export type FleetCounts = Outputs["node"]["counts"];

type Sort = FleetSort;

export function FleetView({
  initialList,
  initialCounts,
  initialView = DEFAULT_VIEW,
  canEdit = false,
}: {
  initialList: FleetList;
  initialCounts: FleetCounts;
  initialView?: View;
  canEdit?: boolean;
}) {
  const trpc = useTRPC();
  // Bulk actions (admins): nodes picked one by one, or all that match the filter.
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  const [bulkAction, setBulkAction] = useState<BulkAction | null>(null);
  const [view, setViewState] = useState<View>(initialView);
  // Every filter, the sort and the page live in the URL (replaced, not pushed: typing is not history).
  const setView = useCallback((patch: Partial<View>) => {
    setViewState((v) => {
      const next = { ...v, ...patch };
      const query = paramsFromView(next).toString();
      window.history.replaceState(window.history.state, "", query ? `?${query}` : window.location.pathname);
      return next;
    });
  }, []);
  const { state, health, sort, order, page, drift } = view;
  const setPage = (p: number) => setView({ page: p });
  const setState = (s: string) => setView({ state: s, page: 0 });
  const setHealth = (h: string) => setView({ health: h, page: 0 });
  const q = useDeferredValue(view.q.trim());
  const l = useDeferredValue(view.labels.trim());
  const r = useDeferredValue(view.role.trim());
  const errors = viewErrors({ ...view, labels: l }, HEALTHS);
  const invalid = Object.keys(errors).length > 0;
  const labelConditions = l && !errors.labels ? (parseLabelFilter(l) as { conditions: string[] }).conditions : [];
  const input = {
    limit: PAGE_SIZE,
    offset: page * PAGE_SIZE,
    sort,
    order,
    ...(state && !errors.state ? { state: state as NodeState } : {}),
    ...(health && !errors.health ? { health: health as (typeof HEALTHS)[number] } : {}),
    ...(q ? { search: q } : {}),
    ...(labelConditions.length ? { labels: labelConditions } : {}),
    ...(r ? { role: r } : {}),
    ...(drift ? { drift: drift === "yes" } : {}),
  };
  const isDefault = page === 0 && sort === "name" && order === "asc" && !state && !health && !q && !l && !r && !drift;
  const list = useQuery(
    trpc.node.list.queryOptions(input, {
      refetchInterval: POLL_MS,
      placeholderData: keepPreviousData,
      initialData: isDefault ? initialList : undefined,
      enabled: !invalid,
    }),
  );
  const counts = useQuery(trpc.node.counts.queryOptions(undefined, { refetchInterval: POLL_MS, initialData: initialCounts }));

  const sortBy = (s: Sort) => {
    if (s === sort) setView({ order: order === "asc" ? "desc" : "asc", page: 0 });
    else setView({ sort: s, order: s === "lastSeenAt" || s === "lastCheckedAt" || s === "lastChangedAt" || s === "driftCount" ? "desc" : "asc", page: 0 });
  };
  const header = (s: Sort, text: string) => (
    <th scope="col" className="px-3 py-2 font-medium" aria-sort={sort === s ? (order === "asc" ? "ascending" : "descending") : "none"}>
      <button
        type="button"
        onClick={() => sortBy(s)}
        className="inline-flex items-center gap-1 rounded hover:text-slate-900 focus-visible:ring-2 focus-visible:ring-sky-500"
      >
        {text}
        <span aria-hidden className="text-xs">
          {sort === s ? (order === "asc" ? "▲" : "▼") : "↕"}
        </span>
      </button>
    </th>
  );
  const total = list.data?.total ?? 0;
  const c = counts.data;
  const { limit: _limit, offset: _offset, ...filter } = input;
  const selection: BulkSelection = allMatching ? { kind: "matching", filter, total } : { kind: "ids", ids: [...picked] };
  const clearSelection = () => (setPicked(new Set()), setAllMatching(false));
  const toggle = (id: string) => {
    setAllMatching(false);
    const next = new Set(picked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };
  const pageIds = list.data?.items.map((n) => n.id) ?? [];
  const pageSelected = pageIds.length > 0 && pageIds.every((id) => allMatching || picked.has(id));
  const togglePage = () => (
    setAllMatching(false), setPicked(pageSelected ? new Set([...picked].filter((id) => !pageIds.includes(id))) : new Set([...picked, ...pageIds]))
  );
  const checkbox = (id: string, name: string) => (
    <input type="checkbox" aria-label={`Select ${name}`} checked={allMatching || picked.has(id)} onChange={() => toggle(id)} className="h-4 w-4" />
  );

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Fleet</h1>
          <p className="text-sm text-slate-600" aria-live="polite">
            {c
              ? `${c.total} node${c.total === 1 ? "" : "s"}: ${c.byHealth.healthy} healthy, ${c.byHealth.failing} failing, ${c.byHealth.drifted} drifted, ${c.byHealth.conflicted} conflicted, ${c.byHealth.stale} stale`
              : ""}
          </p>
        </div>
        {/* Issuing tokens is for admins: a viewer is not offered what they cannot do. */}
        {canEdit && (
          <Link href="/machines" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
            Add machines
          </Link>
        )}
      </div>

      {(c?.byState.pending ?? 0) > 0 && state !== "pending" && (
        <p role="alert" data-testid="pending-banner" className="rounded-md border border-violet-200 bg-violet-50 p-3 text-sm text-violet-900">
          {c!.byState.pending === 1 ? "A machine" : `${c!.byState.pending} machines`} enrolled claiming to be a node that is already in the mesh, without its
          key (a lost state directory, a reinstall, or someone else). Nothing is sent to {c!.byState.pending === 1 ? "it" : "them"} until an admin approves or
          rejects the claim on the node&apos;s page.{" "}
          <button type="button" className="font-medium underline" onClick={() => setState("pending")}>
            Show claims
          </button>
        </p>
      )}

      <ul aria-label="Nodes per health" className="grid grid-cols-2 gap-2 sm:grid-cols-4 lg:grid-cols-7">
        {HEALTHS.map((h) => (
          <li key={h}>
            <button
              type="button"
              aria-pressed={health === h}
              title={HEALTH[h].meaning}
              onClick={() => setHealth(health === h ? "" : h)}
              className={`flex w-full items-center justify-between rounded-lg border bg-white px-3 py-2 text-left hover:border-slate-400 ${health === h ? "border-slate-900 ring-1 ring-slate-900" : "border-slate-200"}`}
            >
              <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${HEALTH[h].colour}`}>{h}</span>
              <span data-testid={`health-count-${h}`} className="text-xl font-semibold tabular-nums">
                {c?.byHealth[h] ?? 0}
              </span>
            </button>
          </li>
        ))}
      </ul>

      <ul aria-label="Nodes per state" className="grid grid-cols-2 gap-2 sm:grid-cols-3 lg:grid-cols-6">
        {NODE_STATES.map((s) => (
          <li key={s}>
            <button
              type="button"
              aria-pressed={state === s}
              onClick={() => setState(state === s ? "" : s)}
              className={`flex w-full items-center justify-between rounded-lg border bg-white px-3 py-2 text-left hover:border-slate-400 ${state === s ? "border-slate-900 ring-1 ring-slate-900" : "border-slate-200"}`}
            >
              <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${STATE_COLOURS[s]}`}>{stateLabel(s)}</span>
              <span data-testid={`count-${s}`} className="text-xl font-semibold tabular-nums">
                {c?.byState[s] ?? 0}
              </span>
            </button>
          </li>
        ))}
      </ul>

      <FleetFilterBar view={view} errors={errors} onChange={setView} />

      {canEdit && (allMatching || picked.size > 0) && (
        <SelectionBar selection={selection} matching={total} onSelectMatching={() => setAllMatching(true)} onClear={clearSelection} onAction={setBulkAction} />
      )}
      {canEdit && <BulkActionsDialog action={bulkAction} selection={selection} onClose={() => setBulkAction(null)} onDone={clearSelection} />}

      {invalid ? (
        <p role="alert" data-testid="invalid-filter" className="rounded-lg border border-rose-200 bg-rose-50 p-4 text-sm text-rose-900">
          No nodes are listed while a filter is invalid: {Object.values(errors).join("; ")}.
        </p>
      ) : list.isPending ? (
        <LoadingState label="Loading nodes…" />
      ) : list.isError && !list.data ? (
        <ErrorState error={list.error} title="Could not load the fleet" />
      ) : list.data.items.length === 0 ? (
        <EmptyState>
          {isDefault ? (
            <>
              No machines yet.{" "}
              <Link href="/machines" className="underline">
                Issue a token
              </Link>{" "}
              and run the command it shows on a machine with mesh-host installed.
            </>
          ) : (
            "No node matches these filters."
          )}
        </EmptyState>
      ) : (
        <>
          {/* On a phone: one card per node, the figures that matter first. */}
          <ul aria-label="Nodes" className="space-y-2 md:hidden">
            {list.data.items.map((n) => (
              <li key={n.id} data-testid="fleet-card" className="rounded-lg border border-slate-200 bg-white p-3 text-sm">
                <div className="flex items-center justify-between gap-2">
                  {canEdit && checkbox(n.id, n.name)}
                  <FleetNodeName node={n} />
                  {n.state === "pending" && <span className="rounded bg-violet-100 px-1.5 text-xs text-violet-900">awaiting approval</span>}
                  <span className="inline-flex gap-1">
                    <HealthBadge health={n.health} />
                    <StateBadge state={n.state} />
                  </span>
                </div>
                <div className="mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-slate-700">
                  <FleetVersions node={n} />
                  {n.driftCount > 0 && <span className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-900">{n.driftCount} drifted</span>}
                  <span>
                    seen <RelativeTime at={n.lastSeenAt} />
                  </span>
                  <span>
                    checked <RelativeTime at={n.lastCheckedAt} />
                  </span>
                  <span>
                    changed <RelativeTime at={n.lastChangedAt} />
                  </span>
                  {n.roles?.length ? <span>roles: {n.roles.join(", ")}</span> : null}
                </div>
                <div className="mt-2">
                  <LabelChips labels={n.labels} />
                </div>
              </li>
            ))}
          </ul>
          <div
            className="hidden overflow-x-auto rounded-lg border border-slate-200 bg-white focus-visible:ring-2 focus-visible:ring-sky-500 md:block"
            tabIndex={0}
            role="region"
            aria-label="Nodes table (scrolls sideways)"
          >
            <table className="min-w-full text-sm">
              <caption className="sr-only">Nodes, page {page + 1}</caption>
              <thead className="bg-slate-50 text-left text-slate-700">
                <tr>
                  {canEdit && (
                    <th scope="col" className="w-8 px-3 py-2">
                      <input type="checkbox" aria-label="Select every node on this page" checked={pageSelected} onChange={togglePage} className="h-4 w-4" />
                    </th>
                  )}
                  {header("name", "Name")}
                  {header("health", "Health")}
                  {header("state", "State")}
                  <th scope="col" className="px-3 py-2 font-medium">
                    Labels
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Roles
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Declared / applied
                  </th>
                  {header("driftCount", "Drift")}
                  {header("lastSeenAt", "Last seen")}
                  {header("lastCheckedAt", "Last checked")}
                  {header("lastChangedAt", "Last changed")}
                  {header("hostVersion", "Host")}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {list.data.items.map((n) => (
                  <tr key={n.id} data-testid="fleet-row" className="hover:bg-slate-50">
                    {canEdit && <td className="px-3 py-2">{checkbox(n.id, n.name)}</td>}
                    <td className="px-3 py-2">
                      <FleetNodeName node={n} />
                      {n.storeLost && <span className="ml-2 rounded bg-rose-100 px-1.5 text-xs text-rose-800">store lost</span>}
                      {n.state === "pending" && (
                        <span className="ml-2 rounded bg-violet-100 px-1.5 text-xs text-violet-900">claims a live node: awaiting approval</span>
                      )}
                    </td>
                    <td className="px-3 py-2">
                      <HealthBadge health={n.health} />
                      {n.conflictCount > 0 && (
                        <span data-testid="conflict-count" className="ml-1 text-xs text-orange-900">
                          {n.conflictCount} conflict{n.conflictCount === 1 ? "" : "s"}
                        </span>
                      )}
                    </td>
                    <td className="px-3 py-2">
                      <StateBadge state={n.state} />
                    </td>
                    <td className="px-3 py-2">
                      <LabelChips labels={n.labels} />
                    </td>
                    <td className="px-3 py-2 text-slate-700">{n.roles?.length ? n.roles.join(", ") : <span className="text-slate-500">none</span>}</td>
                    <td className="px-3 py-2">
                      <FleetVersions node={n} />
                    </td>
                    <td className="px-3 py-2">
                      {n.driftCount > 0 ? (
                        <span
                          data-testid="drift-badge"
                          className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-900 ring-1 ring-amber-200"
                        >
                          {n.driftCount} drifted
                        </span>
                      ) : (
                        <span className="text-slate-500">none</span>
                      )}
                    </td>
                    <td className="px-3 py-2 text-slate-700">
                      <RelativeTime at={n.lastSeenAt} />
                    </td>
                    <td className="px-3 py-2 text-slate-700">
                      <RelativeTime at={n.lastCheckedAt} />
                    </td>
                    <td className="px-3 py-2 text-slate-700">
                      <RelativeTime at={n.lastChangedAt} />
                    </td>
                    <td className="px-3 py-2 font-mono text-xs text-slate-700">{n.hostVersion ?? "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}

      {!invalid && total > PAGE_SIZE && (
        <nav className="flex items-center gap-3 text-sm" aria-label="Pages">
          <Button disabled={page === 0} onClick={() => setPage(page - 1)}>
            Previous
          </Button>
          <span className="text-slate-700">
            {page * PAGE_SIZE + 1}–{Math.min(total, (page + 1) * PAGE_SIZE)} of {total}
          </span>
          <Button disabled={(page + 1) * PAGE_SIZE >= total} onClick={() => setPage(page + 1)}>
            Next
          </Button>
        </nav>
      )}
      {!invalid && list.isError && list.data && <ErrorState error={list.error} title="Live updates paused" />}
    </div>
  );
}
