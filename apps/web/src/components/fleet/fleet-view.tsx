"use client";
// The fleet: counts per state, filters, and one server-sorted page of nodes,
// refreshed every 2 s by polling (see docs/decisions/0006-dashboard.md for why).
import Link from "next/link";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useDeferredValue, useState } from "react";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@mesh/api";
import { useTRPC } from "../trpc";
import { StateBadge, STATE_COLOURS } from "../state-badge";
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

const STATES = ["pending", "enrolled", "disconnected", "retiring", "retired", "revoked"] as const;
type Sort = "name" | "state" | "lastSeenAt" | "driftCount" | "hostVersion";

const inputClass = "rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm";

export function FleetView({ initialList, initialCounts, canEdit = false }: { initialList: FleetList; initialCounts: FleetCounts; canEdit?: boolean }) {
  const trpc = useTRPC();
  // Bulk actions (admins): nodes picked one by one, or all that match the filter.
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  const [bulkAction, setBulkAction] = useState<BulkAction | null>(null);
  const [state, setState] = useState<(typeof STATES)[number] | "">("");
  const [search, setSearch] = useState("");
  const [label, setLabel] = useState("");
  const [role, setRole] = useState("");
  const [drift, setDrift] = useState<"" | "yes" | "no">("");
  const [sort, setSort] = useState<Sort>("name");
  const [order, setOrder] = useState<"asc" | "desc">("asc");
  const [page, setPage] = useState(0);
  const q = useDeferredValue(search.trim());
  const l = useDeferredValue(label.trim());
  const r = useDeferredValue(role.trim());
  const validLabel = /^[A-Za-z0-9._/-]+(=\S*)?$/.test(l);
  const input = {
    limit: PAGE_SIZE,
    offset: page * PAGE_SIZE,
    sort,
    order,
    ...(state ? { state } : {}),
    ...(q ? { search: q } : {}),
    ...(l && validLabel ? { label: l } : {}),
    ...(r ? { role: r } : {}),
    ...(drift ? { drift: drift === "yes" } : {}),
  };
  const isDefault = page === 0 && sort === "name" && order === "asc" && !state && !q && !l && !r && !drift;
  const list = useQuery(
    trpc.node.list.queryOptions(input, {
      refetchInterval: POLL_MS,
      placeholderData: keepPreviousData,
      initialData: isDefault ? initialList : undefined,
    }),
  );
  const counts = useQuery(trpc.node.counts.queryOptions(undefined, { refetchInterval: POLL_MS, initialData: initialCounts }));

  const sortBy = (s: Sort) => {
    if (s === sort) setOrder(order === "asc" ? "desc" : "asc");
    else {
      setSort(s);
      setOrder(s === "lastSeenAt" || s === "driftCount" ? "desc" : "asc");
    }
    setPage(0);
  };
  const header = (s: Sort, text: string) => (
    <th scope="col" className="px-3 py-2 font-medium" aria-sort={sort === s ? (order === "asc" ? "ascending" : "descending") : "none"}>
      <button type="button" onClick={() => sortBy(s)} className="inline-flex items-center gap-1 rounded hover:text-slate-900 focus-visible:ring-2 focus-visible:ring-sky-500">
        {text}
        <span aria-hidden className="text-xs">{sort === s ? (order === "asc" ? "▲" : "▼") : "↕"}</span>
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
  const togglePage = () => (setAllMatching(false), setPicked(pageSelected ? new Set([...picked].filter((id) => !pageIds.includes(id))) : new Set([...picked, ...pageIds])));
  const checkbox = (id: string, name: string) => (
    <input type="checkbox" aria-label={`Select ${name}`} checked={allMatching || picked.has(id)} onChange={() => toggle(id)} className="h-4 w-4" />
  );

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Fleet</h1>
          <p className="text-sm text-slate-600" aria-live="polite">
            {c ? `${c.total} node${c.total === 1 ? "" : "s"}, ${c.drifting} drifting` : ""}
          </p>
        </div>
        <Link href="/machines" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
          Add machines
        </Link>
      </div>

      {(c?.byState.pending ?? 0) > 0 && state !== "pending" && (
        <p role="alert" data-testid="pending-banner" className="rounded-md border border-violet-200 bg-violet-50 p-3 text-sm text-violet-900">
          {c!.byState.pending === 1 ? "A machine" : `${c!.byState.pending} machines`} enrolled claiming to be a node that is already in the mesh, without its key (a lost
          state directory, a reinstall, or someone else). Nothing is sent to {c!.byState.pending === 1 ? "it" : "them"} until an admin approves or rejects the claim on the
          node&apos;s page.{" "}
          <button type="button" className="font-medium underline" onClick={() => (setState("pending"), setPage(0))}>
            Show pending
          </button>
        </p>
      )}

      <ul aria-label="Nodes per state" className="grid grid-cols-2 gap-2 sm:grid-cols-3 lg:grid-cols-6">
        {STATES.map((s) => (
          <li key={s}>
            <button
              type="button"
              aria-pressed={state === s}
              onClick={() => {
                setState(state === s ? "" : s);
                setPage(0);
              }}
              className={`flex w-full items-center justify-between rounded-lg border bg-white px-3 py-2 text-left hover:border-slate-400 ${state === s ? "border-slate-900 ring-1 ring-slate-900" : "border-slate-200"}`}
            >
              <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${STATE_COLOURS[s]}`}>{s}</span>
              <span data-testid={`count-${s}`} className="text-xl font-semibold tabular-nums">
                {c?.byState[s] ?? 0}
              </span>
            </button>
          </li>
        ))}
      </ul>

      <form role="search" aria-label="Filter nodes" className="flex flex-wrap items-end gap-2" onSubmit={(e) => e.preventDefault()}>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Search
          <input type="search" value={search} onChange={(e) => (setSearch(e.target.value), setPage(0))} placeholder="node name" className={inputClass} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          State
          <select value={state} onChange={(e) => (setState(e.target.value as typeof state), setPage(0))} className={inputClass}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Label
          <input value={label} onChange={(e) => (setLabel(e.target.value), setPage(0))} placeholder="tier=web" aria-invalid={!!l && !validLabel} className={inputClass} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Role
          <input value={role} onChange={(e) => (setRole(e.target.value), setPage(0))} placeholder="web" className={inputClass} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Drift
          <select value={drift} onChange={(e) => (setDrift(e.target.value as typeof drift), setPage(0))} className={inputClass}>
            <option value="">any</option>
            <option value="yes">drifting</option>
            <option value="no">no drift</option>
          </select>
        </label>
      </form>

      {canEdit && (allMatching || picked.size > 0) && (
        <SelectionBar selection={selection} matching={total} onSelectMatching={() => setAllMatching(true)} onClear={clearSelection} onAction={setBulkAction} />
      )}
      {canEdit && <BulkActionsDialog action={bulkAction} selection={selection} onClose={() => setBulkAction(null)} onDone={clearSelection} />}

      {list.isPending ? (
        <LoadingState label="Loading nodes…" />
      ) : list.isError && !list.data ? (
        <ErrorState error={list.error} title="Could not load the fleet" />
      ) : list.data.items.length === 0 ? (
        <EmptyState>
          {isDefault ? (
            <>
              No machines yet. <Link href="/machines" className="underline">Issue a token</Link> and run the command it shows on a machine with mesh-host installed.
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
                <Link prefetch={false} href={`/nodes/${n.id}`} className="font-medium underline-offset-2 hover:underline">
                  {n.name}
                </Link>
                {n.state === "pending" && <span className="rounded bg-violet-100 px-1.5 text-xs text-violet-900">awaiting approval</span>}
                <StateBadge state={n.state} />
              </div>
              <div className="mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-slate-700">
                <span className="tabular-nums">v{n.declaredVersion} / v{n.appliedVersion}</span>
                {n.driftCount > 0 && <span className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-900">{n.driftCount} drifted</span>}
                <span>
                  seen <RelativeTime at={n.lastSeenAt} />
                </span>
                {n.roles?.length ? <span>roles: {n.roles.join(", ")}</span> : null}
              </div>
              <div className="mt-2">
                <LabelChips labels={n.labels} />
              </div>
            </li>
          ))}
        </ul>
        <div className="hidden overflow-x-auto rounded-lg border border-slate-200 bg-white md:block">
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
                {header("state", "State")}
                <th scope="col" className="px-3 py-2 font-medium">Labels</th>
                <th scope="col" className="px-3 py-2 font-medium">Roles</th>
                <th scope="col" className="px-3 py-2 font-medium">Declared / applied</th>
                {header("driftCount", "Drift")}
                {header("lastSeenAt", "Last seen")}
                {header("hostVersion", "Host")}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {list.data.items.map((n) => (
                <tr key={n.id} data-testid="fleet-row" className="hover:bg-slate-50">
                  {canEdit && <td className="px-3 py-2">{checkbox(n.id, n.name)}</td>}
                  <td className="px-3 py-2">
                    <Link prefetch={false} href={`/nodes/${n.id}`} className="font-medium text-slate-900 underline-offset-2 hover:underline">
                      {n.name}
                    </Link>
                    {n.storeLost && <span className="ml-2 rounded bg-rose-100 px-1.5 text-xs text-rose-800">store lost</span>}
                    {n.state === "pending" && <span className="ml-2 rounded bg-violet-100 px-1.5 text-xs text-violet-900">claims a live node: awaiting approval</span>}
                  </td>
                  <td className="px-3 py-2">
                    <StateBadge state={n.state} />
                  </td>
                  <td className="px-3 py-2">
                    <LabelChips labels={n.labels} />
                  </td>
                  <td className="px-3 py-2 text-slate-700">{n.roles?.length ? n.roles.join(", ") : <span className="text-slate-500">none</span>}</td>
                  <td className="px-3 py-2 tabular-nums">
                    v{n.declaredVersion} / <span className={n.appliedVersion === n.declaredVersion ? "" : "font-medium text-amber-800"}>v{n.appliedVersion}</span>
                  </td>
                  <td className="px-3 py-2">
                    {n.driftCount > 0 ? (
                      <span data-testid="drift-badge" className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-900 ring-1 ring-amber-200">
                        {n.driftCount} drifted
                      </span>
                    ) : (
                      <span className="text-slate-500">none</span>
                    )}
                  </td>
                  <td className="px-3 py-2 text-slate-700">
                    <RelativeTime at={n.lastSeenAt} />
                  </td>
                  <td className="px-3 py-2 font-mono text-xs text-slate-700">{n.hostVersion ?? "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        </>
      )}

      {total > PAGE_SIZE && (
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
      {list.isError && list.data && <ErrorState error={list.error} title="Live updates paused" />}
    </div>
  );
}
