"use client";
// The audit trail: every mutation and what hosts reported, newest first, filterable by
// actor, action, node and a date range (every filter kept in the URL, so a view can be
// shared or reloaded), paged by the last id seen, and exported as CSV.
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useDeferredValue, useEffect, useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { RelativeTime } from "../relative-time";
import { ColumnHeads } from "../column-heads";
import { EmptyState, ErrorState, LoadingState } from "../states";
import { RoleDiffView, roleDiffOf } from "./role-diff-view";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters as the URL carries them (`?actor=&action=&node=&from=YYYY-MM-DD&to=YYYY-MM-DD`). */
export interface AuditFilters {
  actor?: string;
  action?: string;
  node?: string;
  from?: string;
  to?: string;
}

/** A day in the browser's time zone: `from` starts at its midnight, `to` includes the whole day. */
function dayBounds(from: string, to: string): { since?: string; until?: string; invalid?: string } {
  const since = DAY.test(from) ? new Date(`${from}T00:00`) : undefined;
  const end = DAY.test(to) ? new Date(`${to}T00:00`) : undefined;
  if (end) end.setDate(end.getDate() + 1);
  if (since && end && since >= end) return { invalid: "The range ends before it starts." };
  return { since: since?.toISOString(), until: end?.toISOString() };
}

export function AuditView({ initial }: { initial: AuditFilters }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname() ?? "/audit";
  const queryClient = useQueryClient();
  const [actor, setActor] = useState(initial.actor ?? "");
  const [action, setAction] = useState(initial.action ?? "");
  const [node, setNode] = useState(initial.node ?? "");
  const [from, setFrom] = useState(initial.from ?? "");
  const [to, setTo] = useState(initial.to ?? "");
  const [pages, setPages] = useState<number[]>([]);
  const [exporting, setExporting] = useState<string | null>(null);
  // Rows expanded to show a role change's diff.
  const [open, setOpen] = useState<ReadonlySet<number>>(new Set());
  const toggle = (id: number) =>
    setOpen((o) => {
      const next = new Set(o);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const a = useDeferredValue(actor.trim());
  const ac = useDeferredValue(action.trim());
  const n = useDeferredValue(node.trim());
  const range = dayBounds(from, to);
  const before = pages[pages.length - 1];
  const reset = () => setPages([]);
  // Every filter lives in the URL: a reload or a shared link shows the same view.
  useEffect(() => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({ actor: a, action: ac, node: n, from, to })) if (v) q.set(k, v);
    const next = q.size ? `${pathname}?${q}` : pathname;
    if (next !== `${window.location.pathname}${window.location.search}`) router.replace(next, { scroll: false });
  }, [a, ac, n, from, to, pathname, router]);
  const filter = {
    ...(a ? { actor: a } : {}),
    ...(ac ? { action: ac } : {}),
    ...(UUID.test(n) ? { nodeId: n } : {}),
    ...(range.since ? { since: range.since } : {}),
    ...(range.until ? { until: range.until } : {}),
  };
  const events = useQuery(
    trpc.event.list.queryOptions(
      { limit: 50, ...(before ? { before } : {}), ...filter },
      { refetchInterval: before ? false : 5000, placeholderData: keepPreviousData, enabled: !range.invalid },
    ),
  );
  const exportCsv = async () => {
    setExporting("Exporting…");
    try {
      const out = await queryClient.fetchQuery(trpc.event.export.queryOptions(filter, { staleTime: 0 }));
      const url = URL.createObjectURL(new Blob([out.csv], { type: "text/csv;charset=utf-8" }));
      const link = document.createElement("a");
      link.href = url;
      link.download = `mesh-audit-${new Date().toISOString().slice(0, 10)}.csv`;
      link.click();
      URL.revokeObjectURL(url);
      setExporting(
        out.truncated
          ? `Exported the newest ${out.rows.toLocaleString("en")} events; narrow the range for the rest.`
          : `Exported ${out.rows.toLocaleString("en")} events.`,
      );
    } catch (err) {
      setExporting(`Export failed: ${(err as Error).message}`);
    }
  };
  const field = "rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm";
  return (
    <div className="space-y-4">
      <form role="search" aria-label="Filter events" className="flex flex-wrap items-end gap-2" onSubmit={(e) => e.preventDefault()}>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Actor
          <input value={actor} onChange={(e) => (setActor(e.target.value), reset())} placeholder="user:admin" className={field} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Action
          <input value={action} onChange={(e) => (setAction(e.target.value), reset())} placeholder="role.upsert" className={field} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Node id
          <input
            value={node}
            onChange={(e) => (setNode(e.target.value), reset())}
            placeholder="uuid"
            aria-invalid={!!n && !UUID.test(n)}
            className={`${field} w-80 max-w-full`}
          />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          From
          <input type="date" value={from} onChange={(e) => (setFrom(e.target.value), reset())} aria-invalid={!!range.invalid} className={field} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          To
          <input type="date" value={to} onChange={(e) => (setTo(e.target.value), reset())} aria-invalid={!!range.invalid} className={field} />
        </label>
        <Button onClick={() => void exportCsv()} disabled={!!range.invalid}>
          Export CSV
        </Button>
      </form>
      {n && !UUID.test(n) ? (
        <p role="alert" className="text-sm text-rose-700">
          The node id is not a valid id: it filters nothing until it is.
        </p>
      ) : null}
      {range.invalid ? (
        <p role="alert" className="text-sm text-rose-700">
          {range.invalid}
        </p>
      ) : null}
      {exporting ? (
        <p role="status" className="text-sm text-slate-700">
          {exporting}
        </p>
      ) : null}
      {range.invalid ? null : events.isPending ? (
        <LoadingState label="Loading events…" />
      ) : events.isError ? (
        <ErrorState error={events.error} title="Could not load events" />
      ) : events.data.items.length === 0 ? (
        <EmptyState>No event matches.</EmptyState>
      ) : (
        <div
          className="overflow-x-auto rounded-lg border border-slate-200 bg-white focus-visible:ring-2 focus-visible:ring-sky-500"
          tabIndex={0}
          role="region"
          aria-label="Events (scrolls sideways)"
        >
          <table className="min-w-full text-sm">
            <ColumnHeads
              names={["When", "Actor", "Action", "Node / target", "Result", "Data"]}
              cell="px-3 py-2"
              className="bg-slate-50 text-left text-slate-700"
            />
            <tbody className="divide-y divide-slate-100">
              {events.data.items.map((e) => {
                const diff = roleDiffOf(e.action, e.data);
                return (
                  <Fragment key={e.id}>
                    <tr data-testid="event-row">
                      <td className="whitespace-nowrap px-3 py-2 text-slate-700">
                        <RelativeTime at={e.at} />
                      </td>
                      <td className="px-3 py-2">
                        <button type="button" className="underline-offset-2 hover:underline" title={e.actor} onClick={() => (setActor(e.actor), reset())}>
                          {e.actorName ? `${e.actorName} (host)` : e.actor}
                        </button>
                      </td>
                      <td className="px-3 py-2 font-mono">
                        <button type="button" className="underline-offset-2 hover:underline" onClick={() => (setAction(e.action), reset())}>
                          {e.action}
                        </button>
                      </td>
                      <td className="px-3 py-2">
                        {e.nodeId ? (
                          <Link prefetch={false} href={`/nodes/${e.nodeId}`} className="underline">
                            {e.nodeName ?? e.nodeId.slice(0, 8)}
                          </Link>
                        ) : (
                          <span className="font-mono text-slate-700">{e.target ?? ""}</span>
                        )}
                      </td>
                      <td className={`px-3 py-2 ${e.result === "ok" ? "text-slate-700" : "font-medium text-rose-700"}`}>{e.result}</td>
                      <td className="max-w-xs px-3 py-2 font-mono text-xs text-slate-600">
                        {diff ? (
                          <button
                            type="button"
                            aria-expanded={open.has(e.id)}
                            aria-controls={`diff-${e.id}`}
                            className="font-sans text-sm text-slate-800 underline"
                            onClick={() => toggle(e.id)}
                          >
                            {open.has(e.id) ? "Hide" : "Show"} the change to {String((e.data as { name?: unknown }).name ?? "the role")}
                          </button>
                        ) : (
                          <span className="block truncate" title={JSON.stringify(e.data)}>
                            {JSON.stringify(e.data)}
                          </span>
                        )}
                      </td>
                    </tr>
                    {diff && open.has(e.id) ? (
                      <tr id={`diff-${e.id}`} data-testid="event-diff-row">
                        <td colSpan={6} className="bg-slate-50 px-3 py-2">
                          <RoleDiffView diff={diff} />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Event pages" className="flex gap-2">
        <Button disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </Button>
        <Button disabled={!events.data?.nextBefore} onClick={() => events.data?.nextBefore && setPages([...pages, events.data.nextBefore])}>
          Older
        </Button>
      </nav>
    </div>
  );
}
